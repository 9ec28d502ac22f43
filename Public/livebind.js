/*
 * livebind.js: declarative live bindings to LiveBind models over Server-Sent Events.
 *
 * One readable file, no build step, no dependencies. Include it with
 *   <script src="/livebind.js" defer></script>
 * and declare bindings with data-lb-* attributes (see docs/Browser.md).
 *
 * Sections, top to bottom:
 *   Configuration · Access token · Paths · Watch tree · Model cache · Scopes · Events and errors ·
 *   Writes · Formatting · Directives · Virtual lists · Path subscriptions · Array windows · Walker ·
 *   Frame scheduling · Stream reader · Connection · Presence · Public API · Boot
 */
(function (global) {
  'use strict';

  const document = global.document;

  // ===========================================================================================
  // Configuration
  // ===========================================================================================

  const script = document.currentScript;
  const config = {
    /** Origin of the LiveBind server: the script's own origin unless `data-lb-server` says otherwise. */
    server: (script && script.getAttribute('data-lb-server')) ||
      (script && script.src ? new URL(script.src, global.location.href).origin : global.location.origin),
    /** Milliseconds a text field waits after the last keystroke before it writes. */
    debounce: 200,
    /** Reconnect backoff: first delay, cap, and how many failures before the state says `offline`. */
    backoffBase: 250,
    backoffMax: 15000,
    offlineAfter: 4,
    /** Bearer token for a server started with --token (see "Access token" below); null: none. */
    token: null,
    /**
     * Milliseconds of silence after which the server sends a heartbeat comment (its --heartbeat, 15 s
     * by default). A stream silent for two of them is taken for dead and replaced.
     */
    heartbeat: Number(script && script.getAttribute('data-lb-heartbeat')) * 1000 || 15000,
    /** Most events waiting for the next frame; at this many they are applied at once. */
    maxQueue: 5000,
    /** Milliseconds before a stream narrows after models stop being used (one reconnect for a burst). */
    narrowDelay: 1000,
    /** Attempts of a row edit whose row moved (412) before the conflict is shown. */
    rowRetries: 4,
    /** Retries of a write whose answer was lost (network error, 502/503/504), with the same Idempotency-Key. */
    writeRetries: 3,
    /**
     * Rows past which a `data-lb-each` inside a scrolling container renders as a virtual list on its
     * own (`data-lb-virtual="off"` keeps it whole); 0: never on its own.
     */
    virtualAfter: 200,
  };

  // ===========================================================================================
  // Access token
  //   A server started with --token or --jwt-key needs `Authorization: Bearer <token>` on writes
  //   (and, with --private, on reads). The token comes from LiveBind.configure({token}), else
  //   <meta name="livebind-token" content="…">, else sessionStorage "livebind-token" (where the
  //   dashboard keeps a token it was opened with as /#token=…). The stream is read with fetch, so it
  //   never puts the token in its URL: when the server offers sessions (GET /healthz says
  //   "sessions": true) and is this page's own origin, the token is traded for an HttpOnly session
  //   cookie (POST /session) before the stream opens and the stream carries only the cookie;
  //   otherwise it sends `Authorization: Bearer`. A stream whose token expired (or whose
  //   session ended) gets `auth_revoked`: the page hears `livebind:auth-revoked` and answers with
  //   LiveBind.configure({token}), which reconnects from the last event.
  // ===========================================================================================

  function currentToken() {
    if (config.token) return config.token;
    const meta = document.querySelector('meta[name="livebind-token"]');
    if (meta && meta.content) return meta.content;
    try {
      return global.sessionStorage.getItem('livebind-token') || null;
    } catch (e) {
      return null; // storage disabled
    }
  }

  /** `headers` plus Authorization when there is a token. */
  function withToken(headers) {
    const token = currentToken();
    return token ? Object.assign({ Authorization: 'Bearer ' + token }, headers) : Object.assign({}, headers);
  }

  const session = {
    /** Whether the server offers cookie sessions: null until asked. */
    offered: null,
    /** The token the current session cookie was made from; null: no session. */
    token: null,
  };

  /** Whether streams can use a session cookie: the server offers sessions and is this page's origin. */
  async function sessionsOffered() {
    if (session.offered !== null) return session.offered;
    if (new URL(config.server, global.location.href).origin !== global.location.origin) return (session.offered = false);
    try {
      const response = await fetch(config.server + '/healthz', { cache: 'no-store' });
      session.offered = Boolean((await response.json()).sessions);
    } catch (e) {
      return false; // unreachable: ask again next time
    }
    return session.offered;
  }

  /**
   * Makes sure a session cookie for the current token exists. Resolves true when the stream can
   * rely on it, false when there is no token or no session to be had; rejects with {status, detail}
   * when the server refuses the token.
   */
  async function ensureSession() {
    const token = currentToken();
    if (!token || !(await sessionsOffered())) return false;
    if (session.token === token) return true;
    const response = await fetch(config.server + '/session', {
      method: 'POST', headers: { Authorization: 'Bearer ' + token }, credentials: 'same-origin', cache: 'no-store',
    });
    if (!response.ok) {
      let detail = response.statusText;
      try { detail = (await response.json()).detail || detail; } catch (e) { /* not a problem document */ }
      throw { status: response.status, detail };
    }
    session.token = token;
    return true;
  }

  const ATTRS = ['data-lb-each', 'data-lb-text', 'data-lb-value', 'data-lb-attr', 'data-lb-class', 'data-lb-show', 'data-lb-chart',
    'data-lb-presence'];
  /** Attributes that change how a binding works: changing one rebinds the element. */
  const MODIFIERS = ['data-lb-format', 'data-lb-virtual', 'data-lb-row-height', 'data-lb-window', 'data-lb-step'];
  const EMPTY = Object.freeze([]);

  // ===========================================================================================
  // Paths
  //   Attribute paths are dotted: "sensor.readings.3.value" is model "sensor", pointer
  //   /readings/3/value. Inside a data-lb-each copy, ".value" is relative to the element and
  //   "." is the element itself. Wire paths are RFC 6901 JSON Pointers.
  // ===========================================================================================

  /**
   * Parses an attribute path; throws an Error whose message says what is wrong. Besides the dotted
   * form there is a pointer form for keys holding "." or "/": "model/a.b/c~1d", and "./a.b" inside rows.
   */
  function parsePath(text) {
    const source = text.trim();
    if (source === '') throw new Error('empty path');
    if (source === '.') return { relative: true, model: null, tokens: [] };
    if (source.startsWith('./')) return { relative: true, model: null, tokens: pointerTokens(source.slice(1)) };
    const slash = source.indexOf('/');
    const dot = source.indexOf('.');
    if (slash > 0 && (dot < 0 || slash < dot)) {
      return { relative: false, model: source.slice(0, slash), tokens: pointerTokens(source.slice(slash)) };
    }
    const relative = source[0] === '.';
    const parts = (relative ? source.slice(1) : source).split('.');
    if (parts.some((p) => p === '')) throw new Error(`"${source}" has an empty segment`);
    if (relative) return { relative, model: null, tokens: parts };
    return { relative, model: parts[0], tokens: parts.slice(1) };
  }

  /** JSON Pointer → tokens. */
  function pointerTokens(pointer) {
    if (!pointer) return [];
    if (pointer[0] !== '/') throw new Error(`"${pointer}" is not a JSON Pointer`);
    return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  }

  /** One token as it is written in a JSON Pointer ("~" → "~0", "/" → "~1"). */
  function escapeToken(token) {
    return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
  }

  /** Tokens → JSON Pointer. */
  function tokensPointer(tokens) {
    return tokens.map((t) => '/' + escapeToken(t)).join('');
  }

  function dotted(model, tokens) {
    return [model].concat(tokens).join('.');
  }

  /** The value at `tokens` below `value`, or undefined. Never walks the prototype chain. */
  function lookup(value, tokens, from) {
    for (let i = from || 0; i < tokens.length; i++) {
      if (value === null || typeof value !== 'object') return undefined;
      const t = tokens[i];
      if (Array.isArray(value)) {
        if (!/^(0|[1-9][0-9]*)$/.test(t)) return undefined;
        value = value[+t];
      } else {
        if (!Object.prototype.hasOwnProperty.call(value, t)) return undefined;
        value = value[t];
      }
    }
    return value;
  }

  /** Assigns an own property, even one named "__proto__". */
  function putMember(object, key, value) {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  }

  /** The identity of an array element for reconciling: its `id` (or `key`) member, if any. */
  function keyOf(item) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
    const own = (k) => Object.prototype.hasOwnProperty.call(item, k);
    const key = own('id') ? item.id : own('key') ? item.key : undefined;
    if (key === undefined || key === null) return undefined;
    return typeof key === 'object' ? JSON.stringify(key) : key;
  }

  // ===========================================================================================
  // Watch tree
  //   Watchers hang on a tree of path tokens. A change at path P reaches watchers on the way to
  //   P (their value contains P), at P, and below P. A watcher is { update(change) } or also
  //   { handle(tokens, depth, change) } when it wants the change itself (data-lb-each).
  // ===========================================================================================

  function makeNode() {
    return { watchers: null, children: null };
  }

  /** Adds a watcher; the returned function removes it and prunes the nodes left empty. */
  function addWatcher(root, tokens, watcher) {
    const trail = [root];
    let node = root;
    for (const t of tokens) {
      if (!node.children) node.children = new Map();
      let next = node.children.get(t);
      if (!next) node.children.set(t, (next = makeNode()));
      node = next;
      trail.push(node);
    }
    if (!node.watchers) node.watchers = new Set();
    node.watchers.add(watcher);
    return () => {
      if (!node.watchers || !node.watchers.delete(watcher)) return;
      if (node.watchers.size === 0) node.watchers = null;
      for (let i = trail.length - 1; i > 0; i--) {
        const child = trail[i];
        if (child.watchers || child.children) return;
        const parent = trail[i - 1];
        if (parent.children.get(tokens[i - 1]) !== child) return;
        parent.children.delete(tokens[i - 1]);
        if (parent.children.size === 0) parent.children = null;
      }
    };
  }

  /** How many nodes a watch tree holds (for the leak tests). */
  function countNodes(node) {
    let n = 1;
    if (node.children) for (const child of node.children.values()) n += countNodes(child);
    return n;
  }

  function notify(node, tokens, depth, change) {
    for (;;) {
      if (node.watchers) {
        for (const w of node.watchers) {
          if (w.handle) w.handle(tokens, depth, change);
          else w.update(change);
        }
      }
      if (depth === tokens.length) {
        if (node.children) for (const child of node.children.values()) notifyAll(child, change);
        return;
      }
      const next = node.children && node.children.get(tokens[depth]);
      if (!next) return;
      node = next;
      depth += 1;
    }
  }

  function notifyAll(node, change) {
    if (node.watchers) for (const w of node.watchers) w.update(change);
    if (node.children) for (const child of node.children.values()) notifyAll(child, change);
  }

  // ===========================================================================================
  // Model cache
  //   The last value of every model the page streams, kept current by applying each change.
  // ===========================================================================================

  const models = new Map(); // name → { value, rev }

  /** Applies one wire change to the cache. Returns false when it does not fit (then resync). */
  function applyToCache(change) {
    return applyToEntry(models.get(change.model), change);
  }

  /** Applies one change (with `tokens`) to `entry.value`. */
  function applyToEntry(entry, change) {
    if (!entry) return false;
    const tokens = change.tokens;
    if (change.kind === 'set' && tokens.length === 0) {
      entry.value = change.value;
      return true;
    }
    const arrayOp = change.index !== undefined || change.kind === 'move';
    const target = arrayOp ? lookup(entry.value, tokens) : lookup(entry.value, tokens.slice(0, -1));
    if (arrayOp) {
      if (!Array.isArray(target)) return false;
      switch (change.kind) {
        case 'insert': target.splice(change.index, 0, change.value); return true;
        case 'remove': target.splice(change.index, 1); return true;
        case 'replace': target[change.index] = change.value; return true;
        case 'set': target[change.index] = change.value; return true;
        case 'move': target.splice(change.to, 0, target.splice(change.from, 1)[0]); return true;
        default: return false;
      }
    }
    if (target === null || typeof target !== 'object') return false;
    const last = tokens[tokens.length - 1];
    if (Array.isArray(target)) {
      if (last === '-') target.push(change.value);
      else if (change.kind === 'remove') target.splice(+last, 1);
      else target[+last] = change.value;
    } else if (change.kind === 'remove') {
      delete target[last];
    } else {
      putMember(target, last, change.value);
    }
    return true;
  }

  // ===========================================================================================
  // Scopes
  //   A scope answers "value at tokens", "pointer of tokens" and holds the watch tree for them.
  //   Each model has one; each data-lb-each copy has one relative to its element.
  // ===========================================================================================

  const modelScopes = new Map();

  function modelScope(name) {
    let scope = modelScopes.get(name);
    if (!scope) {
      scope = {
        model: name,
        trie: makeNode(),
        loaded: () => models.has(name),
        get: (tokens) => { const e = models.get(name); return e ? lookup(e.value, tokens) : undefined; },
        pointer: (tokens) => tokens,
      };
      modelScopes.set(name, scope);
    }
    return scope;
  }

  /** Resolves an attribute path in `ctx` to { scope, tokens }, or raises livebind:error and returns null. */
  function resolve(el, attribute, text, ctx) {
    let parsed;
    try {
      parsed = parsePath(text);
    } catch (e) {
      raise(el, attribute, text, e.message);
      return null;
    }
    if (parsed.relative) {
      if (!ctx) {
        raise(el, attribute, text, 'relative path outside a data-lb-each template');
        return null;
      }
      return { scope: ctx, tokens: parsed.tokens, release: () => {} };
    }
    const release = usePath(parsed.model, parsed.tokens, el, attribute, text);
    return { scope: modelScope(parsed.model), tokens: parsed.tokens, release };
  }

  /**
   * Watches `tokens` in `scope`; calls update now when data is there. Returns the unwatch function,
   * which also releases `release` (the model's use, from resolve).
   */
  function watch(scope, tokens, watcher, release) {
    const unwatch = addWatcher(scope.trie, tokens, watcher);
    if (scope.loaded()) watcher.update(null);
    return () => {
      unwatch();
      if (release) release();
    };
  }

  // ===========================================================================================
  // Events and errors
  //   Everything the page may want to react to is a DOM event with a `detail`:
  //   livebind:state {state, node}, livebind:change {model, path, kind, …}, livebind:error
  //   {element, attribute, path, reason}.
  // ===========================================================================================

  function emit(target, name, detail) {
    target.dispatchEvent(new CustomEvent(name, { bubbles: true, detail }));
  }

  function raise(el, attribute, path, reason, extra) {
    const detail = Object.assign({ element: el || null, attribute: attribute || null, path: path || null, reason }, extra);
    const target = el && el.isConnected ? el : document;
    emit(target, 'livebind:error', detail);
  }

  // ===========================================================================================
  // Writes
  //   PUT /models/{model}/{pointer} with the JSON value. Writes to one pointer go out one after
  //   another, so the server sees them in the order they were made.
  // ===========================================================================================

  const writeChains = new Map(); // url → promise of the last write there

  function writeURL(model, tokens) {
    const path = tokens.map((t) => encodeURIComponent(escapeToken(t)));
    return config.server + '/models/' + encodeURIComponent(model) + (path.length ? '/' + path.join('/') : '');
  }

  /**
   * Sends one write after any earlier write to the same place. With `ifMatch` (a revision) the
   * server refuses it (412) if the model has changed since. Resolves with {id, rev}; rejects with
   * {status, detail}.
   */
  function write(model, tokens, value, ifMatch) {
    const url = writeURL(model, tokens);
    const previous = writeChains.get(url) || Promise.resolve();
    const next = previous.catch(() => {}).then(() => send(url, value, ifMatch));
    writeChains.set(url, next);
    const forget = () => { if (writeChains.get(url) === next) writeChains.delete(url); };
    next.then(forget, forget);
    return next;
  }

  /** A fresh Idempotency-Key: a retry of the same write sends it again, so the server applies it once. */
  function idempotencyKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  /**
   * PUTs `value`. A write whose answer is lost (the network failed, or 502/503/504: a proxy or a
   * cluster node that could not finish it; 409 with Retry-After: an earlier try is still running) may
   * still have been applied: it is sent again, up to
   * `writeRetries` times, with the same Idempotency-Key, and the server answers a retry of a write it
   * applied with that write's answer instead of applying it again (an If-Match retry would otherwise
   * get 412 from its own first try).
   */
  async function send(url, value, ifMatch) {
    let response;
    const headers = { 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey() };
    if (ifMatch !== undefined) headers['If-Match'] = '"' + ifMatch + '"';
    const sent = JSON.stringify(value);
    for (let attempt = 0; ; attempt++) {
      let failure = null;
      try {
        response = await fetch(url, { method: 'PUT', headers: withToken(headers), body: sent });
        // 409 with Retry-After: an earlier try with this key is still running (after a 504, say).
        if ([502, 503, 504].includes(response.status) || (response.status === 409 && response.headers.get('Retry-After'))) {
          failure = { status: response.status, detail: response.statusText };
        }
      } catch (e) {
        failure = { status: 0, detail: 'network error: ' + e.message };
      }
      if (!failure) break;
      if (attempt >= config.writeRetries) {
        if (failure.status === 0) throw failure;
        break;
      }
      const after = response && failure.status ? Number(response.headers.get('Retry-After')) : NaN;
      await new Promise((resolve) => setTimeout(resolve, after > 0 ? Math.min(after, 5) * 1000 : 250 * 2 ** attempt));
    }
    const text = await response.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
    if (!response.ok) {
      const detail = (body && (body.detail || body.title)) || response.statusText || 'write rejected';
      throw { status: response.status, detail };
    }
    return body;
  }

  // ===========================================================================================
  // Formatting
  //   "kind" or "kind:option=value,option=value" (a bare word is the kind's main option):
  //     number · integer · percent · currency:EUR · unit:celsius · date · time · datetime
  //   with any option of Intl.NumberFormat / Intl.DateTimeFormat (maximumFractionDigits=1,
  //   dateStyle=medium, timeZone=UTC, unitDisplay=long, …). Given as data-lb-format for
  //   data-lb-text, or after a "|" in a path: data-lb-attr="title:sensor.t | unit:celsius".
  //   The locale is the element's nearest lang attribute, else the browser's.
  // ===========================================================================================

  const FORMAT_KINDS = {
    number: { intl: 'number', main: null, defaults: {} },
    integer: { intl: 'number', main: null, defaults: { maximumFractionDigits: 0 } },
    percent: { intl: 'number', main: null, defaults: { style: 'percent', maximumFractionDigits: 1 } },
    currency: { intl: 'number', main: 'currency', defaults: { style: 'currency' } },
    unit: { intl: 'number', main: 'unit', defaults: { style: 'unit' } },
    date: { intl: 'date', main: 'dateStyle', defaults: { dateStyle: 'medium' } },
    time: { intl: 'date', main: 'timeStyle', defaults: { timeStyle: 'medium' } },
    datetime: { intl: 'date', main: 'dateStyle', defaults: { dateStyle: 'medium', timeStyle: 'short' } },
  };

  const formatters = new Map(); // "locale|spec" → format function; at most 256, oldest dropped first

  /** "percent:maximumFractionDigits=2" → {kind, options}; throws an Error saying what is wrong. */
  function parseFormat(text) {
    const source = text.trim();
    const colon = source.indexOf(':');
    const name = (colon < 0 ? source : source.slice(0, colon)).trim();
    const kind = FORMAT_KINDS[name];
    if (!kind) throw new Error(`unknown format "${name}" (number, integer, percent, currency, unit, date, time or datetime)`);
    const options = Object.assign({}, kind.defaults);
    if (colon >= 0) {
      for (const part of source.slice(colon + 1).split(',')) {
        const item = part.trim();
        if (!item) continue;
        const eq = item.indexOf('=');
        if (eq < 0) {
          if (!kind.main) throw new Error(`"${item}": format ${name} takes option=value pairs`);
          options[kind.main] = item;
          continue;
        }
        const key = item.slice(0, eq).trim();
        const raw = item.slice(eq + 1).trim();
        options[key] = raw === 'true' ? true : raw === 'false' ? false : /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
      }
    }
    if (name === 'datetime' && (options.timeStyle === undefined) !== (options.dateStyle === undefined)) {
      // one style given: keep the other one's default so "datetime:dateStyle=long" still shows a time
      options.timeStyle = options.timeStyle || 'short';
      options.dateStyle = options.dateStyle || 'medium';
    }
    return { name, intl: kind.intl, options };
  }

  /** A function value → text for a format spec and the element's locale; throws on a bad spec. */
  function makeFormatter(el, text) {
    const locale = (el.closest && el.closest('[lang]') && el.closest('[lang]').lang) || undefined;
    const cacheKey = (locale || '') + '|' + text;
    let format = formatters.get(cacheKey);
    if (format) return format;
    const spec = parseFormat(text);
    if (spec.intl === 'number') {
      const intl = new Intl.NumberFormat(locale, spec.options); // throws RangeError on a bad option
      format = (v) => (typeof v === 'number' ? intl.format(v) : toText(v));
    } else {
      const intl = new Intl.DateTimeFormat(locale, spec.options);
      format = (v) => {
        // epoch milliseconds or an ISO 8601 string; anything else is shown as it is
        const date = typeof v === 'number' ? new Date(v) : typeof v === 'string' && /^\d{4}-\d\d/.test(v) ? new Date(v) : null;
        return date && !Number.isNaN(date.getTime()) ? intl.format(date) : toText(v);
      };
    }
    if (formatters.size >= 256) formatters.delete(formatters.keys().next().value);
    formatters.set(cacheKey, format);
    return format;
  }

  /** Splits "path | format" into [path, formatter or null]; raises livebind:error for a bad format. */
  function splitFormat(el, attribute, text, fallback) {
    const bar = text.indexOf('|');
    const path = bar < 0 ? text : text.slice(0, bar).trim();
    const spec = bar < 0 ? fallback : text.slice(bar + 1).trim();
    if (!spec) return [path, toText];
    try {
      return [path, makeFormatter(el, spec)];
    } catch (e) {
      raise(el, attribute, text, `bad format "${spec}": ${e.message}`, { format: spec });
      return [path, toText];
    }
  }

  // ===========================================================================================
  // Directives
  //   Each is (el, value, ctx) => cleanup. `value` is the attribute text; `ctx` the scope of the
  //   enclosing data-lb-each copy (or null).
  // ===========================================================================================

  function toText(value) {
    if (value === undefined || value === null) return '';
    if (typeof value === 'object') return JSON.stringify(value);
    return String(value);
  }

  /** "name:path; name2:path2" → [[name, path], …]. A leading "!" on the path negates it. */
  function parsePairs(el, attribute, text) {
    const pairs = [];
    for (const part of text.split(';')) {
      if (part.trim() === '') continue;
      const colon = part.indexOf(':');
      const name = colon < 0 ? '' : part.slice(0, colon).trim();
      const path = colon < 0 ? '' : part.slice(colon + 1).trim();
      if (!name || !path) raise(el, attribute, part.trim(), 'expected "name:path"');
      else pairs.push([name, path]);
    }
    return pairs;
  }

  /** Binds a path that may start with "!" and calls `apply(value)` whenever it changes. */
  function bindValue(el, attribute, path, ctx, apply) {
    const negate = path[0] === '!';
    const r = resolve(el, attribute, negate ? path.slice(1) : path, ctx);
    if (!r) return null;
    return watch(r.scope, r.tokens, {
      update: () => {
        const v = r.scope.get(r.tokens);
        apply(negate ? !truthy(v) : v);
      },
    }, r.release);
  }

  function truthy(value) {
    if (Array.isArray(value)) return value.length > 0;
    return Boolean(value);
  }

  // ---- data-lb-attr: model data is never code ----------------------------------------------
  //   Names are checked when the binding is made: some attributes are code, load code or
  //   retarget the page whatever their value. Values of URL attributes are checked each time
  //   they are applied, against an allowlist of schemes.

  /** Attributes that are code, or choose what code or markup runs, on any element. */
  const CODE_ATTRIBUTES = new Set([
    'style', 'srcdoc',
    // SVG animation: <set attributeName="href" to="…"> gives a link any URL, past the checks below.
    'attributename', 'to', 'from', 'by', 'values',
  ]);

  /** Elements whose attributes decide what the page loads, runs or resolves its URLs against. */
  const CODE_ELEMENTS = new Set(['script', 'base', 'meta', 'link', 'object', 'embed']);

  /** Attributes of an <iframe> that set its security policy: a model may not loosen them. */
  const FRAME_POLICY_ATTRIBUTES = new Set(['sandbox', 'allow', 'csp', 'allowfullscreen', 'credentialless', 'referrerpolicy']);

  /** Elements whose text is code. */
  const CODE_TEXT_ELEMENTS = new Set(['script', 'style']);

  /** URL-valued attributes: one URL, a whitespace-separated list, or srcset candidates. */
  const URL_ATTRIBUTES = new Map([
    ['href', 'url'], ['xlink:href', 'url'], ['src', 'url'], ['action', 'url'], ['formaction', 'url'],
    ['poster', 'url'], ['data', 'url'], ['cite', 'url'], ['background', 'url'], ['codebase', 'url'],
    ['manifest', 'url'], ['longdesc', 'url'], ['lowsrc', 'url'], ['dynsrc', 'url'], ['classid', 'url'],
    ['profile', 'url'], ['icon', 'url'], ['xml:base', 'url'],
    ['ping', 'list'], ['archive', 'list'], ['attributionsrc', 'list'],
    ['srcset', 'list'], ['imagesrcset', 'list'],
  ]);

  const URL_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);
  const DATA_IMAGE = /^data:image\/(?:png|gif|jpeg|webp);base64,[a-z0-9+/]*={0,2}$/i;

  /** Why attribute `name` may not be bound on `el`, or null. */
  function refusedName(el, name) {
    const lower = name.toLowerCase();
    if (lower.startsWith('on')) return 'event handler attributes run code';
    if (lower.startsWith('data-lb-')) return 'a model may not choose bindings';
    if (CODE_ATTRIBUTES.has(lower)) return 'model data is never code';
    if (CODE_ELEMENTS.has(el.localName)) return `<${el.localName}> decides what the page loads or runs`;
    if (el.localName === 'iframe' && FRAME_POLICY_ATTRIBUTES.has(lower)) return 'a frame\'s security policy is the page\'s, not the model\'s';
    return null;
  }

  /** Why `text` may not be the value of attribute `name` on `el`, or null. */
  function refusedValue(el, name, text) {
    const lower = name.toLowerCase();
    if (lower === 'id' || lower === 'name') return clobbers(text);
    const kind = URL_ATTRIBUTES.get(lower);
    if (!kind) return null;
    const image = lower === 'src' && el.localName === 'img' && el.namespaceURI === 'http://www.w3.org/1999/xhtml';
    if (kind === 'url') return refusedURL(text, image);
    // Lists and srcset: every piece between ASCII whitespace or commas is checked as a URL, so each
    // candidate's scheme is checked whatever the descriptors (a "2x" is a harmless relative URL).
    for (const piece of text.split(/[\t\n\f\r ,]+/)) {
      const why = piece && refusedURL(piece, false);
      if (why) return why;
    }
    return null;
  }

  /**
   * Why `text` is not an allowed URL, or null. Allowed: http, https, mailto, tel and relative URLs;
   * with `image`, base64 PNG/GIF/JPEG/WebP data: URLs.
   */
  function refusedURL(text, image) {
    // URL parsers drop leading and trailing spaces and controls and every tab and newline before they
    // read the scheme ("\u0001java\tscript:" is javascript:): refuse controls outright, trim the rest.
    const url = text.trim();
    if (/[\u0000-\u001f\u007f]/.test(url)) return 'a URL with control characters';
    // The scheme exactly as the URL standard reads it; without one the URL is relative to the page.
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url);
    if (!scheme) return null;
    const name = scheme[1].toLowerCase();
    if (URL_SCHEMES.has(name)) return null;
    if (name === 'data' && image && DATA_IMAGE.test(url)) return null;
    return `scheme "${name}:" is not allowed (http, https, mailto, tel or a relative URL)`;
  }

  /** Why `text` as an id or name would shadow a built-in property of document or of a form, or null. */
  function clobbers(text) {
    // <img name="querySelector"> makes document.querySelector that image (DOM clobbering). Only
    // built-ins count: `text in document` would also see the names other elements already hold.
    if (text in documentPrototype || text === 'location' || text in formProbe) {
      return `"${text}" would shadow document.${text} or form.${text}`;
    }
    return null;
  }

  const documentPrototype = Object.getPrototypeOf(document);
  const formProbe = document.createElement('form');

  function combine(cleanups) {
    const list = cleanups.filter(Boolean);
    return () => { for (const c of list) c(); };
  }

  const directives = {
    'data-lb-text': (el, path, ctx) => {
      if (CODE_TEXT_ELEMENTS.has(el.localName)) {
        // An empty <script> runs the first text put in it; a <style> would apply it.
        raise(el, 'data-lb-text', path, `data-lb-text is not allowed on <${el.localName}>: model data is never code`);
        return null;
      }
      const [source, format] = splitFormat(el, 'data-lb-text', path, el.getAttribute('data-lb-format'));
      return bindValue(el, 'data-lb-text', source, ctx, (v) => {
        const text = format(v);
        const only = el.firstChild;
        // Reuse a lone text node: no node churn, no childList mutation records.
        if (only && only.nodeType === 3 && !only.nextSibling) {
          if (only.data !== text) only.data = text;
        } else if (el.textContent !== text) {
          el.textContent = text;
        }
      });
    },

    'data-lb-show': (el, path, ctx) =>
      bindValue(el, 'data-lb-show', path, ctx, (v) => { el.hidden = !truthy(v); }),

    'data-lb-class': (el, text, ctx) =>
      combine(parsePairs(el, 'data-lb-class', text).map(([name, path]) =>
        bindValue(el, 'data-lb-class', path, ctx, (v) => el.classList.toggle(name, truthy(v))))),

    'data-lb-attr': (el, text, ctx) =>
      combine(parsePairs(el, 'data-lb-attr', text).map(([name, pathAndFormat]) => {
        const refusal = refusedName(el, name);
        if (refusal) {
          raise(el, 'data-lb-attr', pathAndFormat, `binding "${name}" is not allowed: ${refusal}`, { name });
          return null;
        }
        const [path, format] = splitFormat(el, 'data-lb-attr', pathAndFormat, null);
        return bindValue(el, 'data-lb-attr', path, ctx, (v) => {
          if (v === undefined || v === null || v === false) return el.removeAttribute(name);
          const text = v === true ? '' : format(v);
          const unsafe = refusedValue(el, name, text);
          if (unsafe) {
            el.removeAttribute(name);
            raise(el, 'data-lb-attr', path, `refused unsafe value for "${name}": ${unsafe}`, { name, value: text });
          } else if (el.getAttribute(name) !== text) {
            el.setAttribute(name, text);
          }
        });
      })),

    'data-lb-value': (el, path, ctx) => bindField(el, path, ctx),

    'data-lb-each': (el, path, ctx) => bindEach(el, path, ctx),

    'data-lb-chart': (el, path, ctx) => bindChart(el, path, ctx),

    'data-lb-presence': (el, room) => bindPresence(el, room),
  };

  // ---- data-lb-value: two-way fields -------------------------------------------------------

  function fieldKind(el) {
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (el.tagName === 'INPUT' && type === 'checkbox') return 'checkbox';
    if (el.tagName === 'INPUT' && type === 'radio') return 'radio';
    if (el.tagName === 'INPUT' && (type === 'number' || type === 'range')) return 'number';
    return 'text';
  }

  function bindField(el, path, ctx) {
    if (!/^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)) {
      raise(el, 'data-lb-value', path, 'data-lb-value needs an input, textarea or select');
      return null;
    }
    const r = resolve(el, 'data-lb-value', path, ctx);
    if (!r) return null;
    const kind = fieldKind(el);
    const debounce = Number(el.getAttribute('data-lb-debounce')) || config.debounce;
    // dirty: edited and not yet sent; sending: a write is on its way; queued: the newest edit while sending.
    const state = { dirty: false, sending: false, queued: undefined, timer: 0 };

    const serverValue = () => r.scope.get(r.tokens);

    function show(value) {
      if (kind === 'checkbox') el.checked = Boolean(value);
      else if (kind === 'radio') el.checked = value !== undefined && el.value === toText(value);
      else {
        const text = toText(value);
        if (el.value !== text) el.value = text;
      }
    }

    function read() {
      if (kind === 'checkbox') return el.checked;
      if (kind === 'number') return el.value.trim() === '' ? undefined : el.valueAsNumber;
      const text = el.value;
      // A text field over a number keeps it a number when the text is one.
      if (typeof serverValue() === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
      return text;
    }

    function busy() {
      return state.dirty || state.sending;
    }

    function update() {
      if (busy() && document.activeElement === el) return; // never overwrite what the user is typing
      if (!busy()) show(serverValue());
    }

    function flush() {
      clearTimeout(state.timer);
      if (!state.dirty) return;
      state.dirty = false;
      const value = read();
      if (value === undefined || (typeof value === 'number' && !Number.isFinite(value))) return;
      if (state.sending) { state.queued = { value }; return; }
      transmit(value);
    }

    function transmit(value) {
      state.sending = true;
      const scope = r.scope;
      (scope.row ? writeInRow(scope, r.tokens, value) : write(scope.model, scope.pointer(r.tokens), value)).then(
        (result) => {
          el.removeAttribute('aria-invalid');
          // Until the stream has delivered this write, the local copy is older than the field.
          finish(result && result.id !== undefined && applied(result.id));
        },
        (error) => {
          state.queued = undefined;
          finish(false);
          el.setAttribute('aria-invalid', 'true');
          if (!state.dirty) show(serverValue());
          raise(el, 'data-lb-value', path, error.detail, { status: error.status, value });
        });
    }

    function finish(current) {
      state.sending = false;
      if (state.queued) {
        const { value } = state.queued;
        state.queued = undefined;
        transmit(value);
      } else if (current && !state.dirty && document.activeElement !== el) {
        show(serverValue());
      }
    }

    const onInput = () => {
      state.dirty = true;
      clearTimeout(state.timer);
      if (kind === 'checkbox' || kind === 'radio' || el.tagName === 'SELECT') flush();
      else state.timer = setTimeout(flush, debounce);
    };
    const onChange = () => { state.dirty = true; flush(); };
    const onBlur = () => { flush(); if (!busy()) show(serverValue()); };

    el.addEventListener('input', onInput);
    el.addEventListener('change', onChange);
    el.addEventListener('blur', onBlur);
    const unwatch = watch(r.scope, r.tokens, { update }, r.release);
    return () => {
      clearTimeout(state.timer);
      el.removeEventListener('input', onInput);
      el.removeEventListener('change', onChange);
      el.removeEventListener('blur', onBlur);
      unwatch();
    };
  }

  /**
   * A write from inside a data-lb-each copy. Its index may be stale (another client inserted above
   * it and the stream has not told us yet), so it goes with If-Match: the revision the page has. On
   * 412, a row with an id (or key) waits for the stream to catch up and retries at the row's index
   * then; a row without one, or one removed meanwhile, rejects with the conflict.
   */
  async function writeInRow(scope, tokens, value) {
    for (let attempt = 0; ; attempt++) {
      const entry = models.get(scope.model);
      const rev = scope.rev ? scope.rev() : entry ? entry.rev : undefined;
      try {
        return await write(scope.model, scope.pointer(tokens), value, rev);
      } catch (error) {
        if (error.status !== 412) throw error;
        const row = scope.row;
        if (row.key === undefined || attempt >= config.rowRetries) {
          throw { status: 412, detail: 'the list changed before this edit reached the server (someone else edited it); the field shows the current value' };
        }
        await nextFlush(250 * (attempt + 1));
        if (!row.alive) throw { status: 412, detail: 'the row was removed by someone else before this edit reached the server' };
      }
    }
  }

  // ---- data-lb-each: one template copy per array element -------------------------------------

  /** Takes a copy of a data-lb-each row out of the page, with its bindings. */
  function dropEachRow(row) {
    row.alive = false;
    row.el.remove();
    unbindTree(row.el);
  }

  /** One copy of the template for element `index` of `list()`, bound in a scope of its own. */
  function makeEachRow(r, list, proto, index) {
    const row = { index, key: keyOf(list()[index]), trie: makeNode(), el: proto.cloneNode(true), alive: true };
    row.scope = {
      model: r.scope.model,
      rev: r.rev || r.scope.rev || null,
      row,
      trie: row.trie,
      loaded: () => true,
      get: (tokens) => lookup(list()[row.index], tokens),
      pointer: (tokens) => r.scope.pointer(r.tokens).concat(String(row.index), tokens),
    };
    rowScopes.set(row.el, row.scope);
    walk(row.el, row.scope);
    return row;
  }

  /**
   * The watcher of a data-lb-each list, plain or virtual: a change of the whole array reconciles, an
   * operation on it goes to its row, a change inside an element to that row's bindings. `ops`, with
   * array indexes: reconcile(change), insertAt(i), removeAt(i), replaceAt(i, change), moveRow(from,
   * to), and rowAt(i), element i's rendered row or undefined.
   */
  function eachWatcher(list, ops) {
    return {
      update: (change) => ops.reconcile(change),
      handle(tokens, depth, change) {
        if (depth === tokens.length) {
          if (change.index === undefined && change.kind !== 'move') return ops.reconcile(change);
          switch (change.kind) {
            case 'insert': return ops.insertAt(change.index);
            case 'remove': return ops.removeAt(change.index);
            case 'replace': case 'set': return ops.replaceAt(change.index, change);
            case 'move': return ops.moveRow(change.from, change.to);
            default: return ops.reconcile(change);
          }
        }
        if (depth === tokens.length - 1 && (change.kind === 'remove' || tokens[depth] === '-')) {
          return change.kind === 'remove' ? ops.removeAt(+tokens[depth]) : ops.reconcile(change);
        }
        const row = ops.rowAt(+tokens[depth]);
        if (!row || String(row.index) !== tokens[depth]) return;
        notify(row.trie, tokens, depth + 1, change);
        row.key = keyOf(list()[row.index]);
      },
    };
  }

  function bindEach(el, path, ctx) {
    const template = Array.from(el.children).find((c) => c.tagName === 'TEMPLATE');
    if (!template || template.content.childElementCount !== 1) {
      raise(el, 'data-lb-each', path, 'data-lb-each needs one <template> child holding exactly one element');
      return null;
    }
    if (el.hasAttribute('data-lb-where') || el.hasAttribute('data-lb-order')) return bindViewEach(el, path, template);
    const virtual = el.getAttribute('data-lb-virtual');
    if (virtual !== null && virtual !== 'off' && el.hasAttribute('data-lb-window') && !ctx) {
      let parsed = null;
      try { parsed = parsePath(path); } catch (e) { /* resolve below says what is wrong */ }
      if (parsed && !parsed.relative) {
        const limit = Math.max(1, Number(el.getAttribute('data-lb-window')) || 300);
        const { win, release } = useWindow(parsed.model, parsed.tokens, limit);
        const scope = modelScope(parsed.model);
        return bindVirtualEach(el, path, { scope, tokens: parsed.tokens, release, rev: () => (win.mode === 'window' ? win.rev : (models.get(parsed.model) || {}).rev) }, template, win);
      }
    }
    const r = resolve(el, 'data-lb-each', path, ctx);
    if (!r) return null;
    if (virtual !== null && virtual !== 'off') return bindVirtualEach(el, path, r, template, null);
    const list = () => {
      const v = r.scope.get(r.tokens);
      return Array.isArray(v) ? v : EMPTY;
    };
    // Only a top-level list turns virtual on its own (copies' own lists are short).
    const tooLong = ctx ? () => false : turnsVirtual(el, path, list, virtual);
    if (tooLong()) return bindVirtualEach(el, path, r, template, null);
    return bindWholeEach(el, path, r, template, list, tooLong);
  }

  /**
   * Whether a list without data-lb-virtual="on" should now render as a virtual list: once it grows past
   * `virtualAfter` rows inside a scrolling container (rendering 100,000 rows whole takes a page tens of
   * seconds), unless data-lb-virtual="off". The container is looked up once, when the list is long; a
   * long list with none, where the page asked for one in a style its Content-Security-Policy refused,
   * says so in the console (the page's author sees no other sign: every row is rendered).
   */
  function turnsVirtual(el, path, list, virtual) {
    let inScroller = null;
    return () => {
      if (virtual !== null || config.virtualAfter <= 0 || list().length <= config.virtualAfter) return false;
      if (inScroller === null) {
        inScroller = scrollerOf(el) !== null;
        const refused = inScroller ? null : refusedScrollStyle(el);
        if (refused) {
          console.warn(`livebind.js: data-lb-each="${path}" has ${list().length} rows and no scrolling container, so ` +
            `every row is rendered: ${refused} was refused by the page's Content-Security-Policy. Move it into a ` +
            'stylesheet, or serve the page with a policy that allows it (livebind-server --content-security-policy).');
        }
      }
      return inScroller;
    };
  }

  /** What asked `el` or an ancestor to scroll but is not applied: a `style=` attribute with an
   *  `overflow` the element does not have, or a `<style>` element whose sheet was never made. */
  function refusedScrollStyle(el) {
    for (let p = el; p && p !== document.documentElement; p = p.parentElement) {
      const written = p.getAttribute('style') || '';
      if (/overflow(-y)?\s*:\s*(auto|scroll)/i.test(written) && !/^(auto|scroll)$/.test(getComputedStyle(p).overflowY)) {
        return `style="${written}" on <${p.localName}>`;
      }
    }
    return Array.from(document.querySelectorAll('style')).some((style) => !style.sheet) ? 'a <style> element' : null;
  }

  /** A `data-lb-each` with a copy of the template per element; `tooLong()` true: it turns virtual. */
  function bindWholeEach(el, path, r, template, list, tooLong) {
    const proto = template.content.firstElementChild;
    const anchor = document.createComment(' data-lb-each ' + path + ' ');
    template.after(anchor);
    const rows = [];

    const makeRow = (index) => makeEachRow(r, list, proto, index);

    const dropRow = dropEachRow;

    function renumber(from, to) {
      const end = to === undefined ? rows.length - 1 : to;
      for (let i = from; i <= end; i++) rows[i].index = i;
    }

    /** The node a row at position i (in `rows` after the splice) must sit before. */
    function nodeAfter(i) {
      if (i + 1 < rows.length) return rows[i + 1].el;
      return i > 0 ? rows[i - 1].el.nextSibling : anchor.nextSibling;
    }

    function insertAt(i) {
      if (i < 0 || i > rows.length) return reconcile();
      const row = makeRow(i);
      rows.splice(i, 0, row);
      el.insertBefore(row.el, nodeAfter(i));
      renumber(i + 1);
    }

    function removeAt(i) {
      if (i < 0 || i >= rows.length) return reconcile();
      const [row] = rows.splice(i, 1);
      dropRow(row);
      renumber(i);
    }

    function replaceAt(i, change) {
      const row = rows[i];
      if (!row) return reconcile();
      const key = keyOf(list()[i]);
      if (key === row.key) {
        notifyAll(row.trie, change); // same element identity: update in place, keep focus
        return;
      }
      const fresh = makeRow(i);
      el.replaceChild(fresh.el, row.el);
      row.alive = false;
      unbindTree(row.el);
      rows[i] = fresh;
    }

    function moveRow(from, to) {
      if (from < 0 || from >= rows.length || to < 0 || to >= rows.length) return reconcile();
      if (from === to) return;
      const [row] = rows.splice(from, 1);
      rows.splice(to, 0, row);
      el.insertBefore(row.el, nodeAfter(to));
      renumber(Math.min(from, to), Math.max(from, to));
    }

    /** Makes the rows match the array, reusing rows by key (or by position when elements have no key). */
    function reconcile(change) {
      const items = list();
      const keyed = rows.every((row) => row.key !== undefined) && items.every((item) => keyOf(item) !== undefined);
      const next = new Array(items.length).fill(null);
      const unused = new Set(rows);
      if (keyed) {
        const byKey = new Map();
        for (const row of rows) {
          const same = byKey.get(row.key);
          if (same) same.push(row); else byKey.set(row.key, [row]);
        }
        items.forEach((item, i) => {
          const same = byKey.get(keyOf(item));
          const row = same && same.shift();
          if (row) { next[i] = row; unused.delete(row); }
        });
      } else {
        for (let i = 0; i < Math.min(items.length, rows.length); i++) { next[i] = rows[i]; unused.delete(rows[i]); }
      }
      for (const row of unused) dropRow(row);
      rows.length = 0;
      for (let i = 0; i < items.length; i++) {
        let row = next[i];
        if (row) {
          row.index = i;
          row.key = keyOf(items[i]);
          rows.push(row);
          notifyAll(row.trie, change || null);
        } else {
          rows.push(null);
          row = makeRow(i);
          rows[i] = row;
        }
        const previous = i === 0 ? anchor : rows[i - 1].el;
        if (previous.nextSibling !== row.el) el.insertBefore(row.el, previous.nextSibling);
      }
    }

    // Once the array is too long, nothing more is rendered whole: after this change is handled, the
    // rows go and a virtual list takes over (with the same use of the model: no resubscription).
    let turned = false;
    let disposed = false;
    let virtualCleanup = null;
    let unwatch = null;
    function dropAll() {
      for (const row of rows) dropRow(row);
      rows.length = 0;
      anchor.remove();
    }
    function turnVirtual() {
      if (turned) return;
      turned = true;
      queueMicrotask(() => {
        if (disposed) return;
        if (unwatch) unwatch();
        dropAll();
        virtualCleanup = bindVirtualEach(el, path, Object.assign({}, r, { release: null }), template, null);
      });
    }
    const guard = (fn) => (...args) => {
      if (turned || tooLong()) return turnVirtual();
      return fn(...args);
    };
    const watcher = eachWatcher(list, {
      reconcile: guard(reconcile), insertAt: guard(insertAt), removeAt: guard(removeAt),
      replaceAt: guard(replaceAt), moveRow: guard(moveRow),
      rowAt: (i) => rows[i],
    });
    unwatch = watch(r.scope, r.tokens, watcher, null);
    return () => {
      disposed = true;
      if (virtualCleanup) virtualCleanup();
      else {
        unwatch();
        dropAll();
      }
      if (r.release) r.release();
    };
  }

  // ---- data-lb-chart: a value's recent history as a small line chart -------------------------
  //   <div data-lb-chart="sensor.temperature" data-lb-window="1h" data-lb-step="30s"> draws the
  //   bucketed history (GET /models/sensor/temperature?history&from=-1h&step=30s, each bucket's
  //   average) as an inline SVG, then keeps it live from the page's stream: a value whose event id
  //   is past the answer's `id` joins the newest bucket, and buckets older than the window slide
  //   out. A snapshot the answer does not cover (after a resync, a replaced model) fetches again.

  const SVG_NS = 'http://www.w3.org/2000/svg';
  const CHART = { width: 240, height: 64, plot: 196 }; // the viewBox; labels sit right of `plot`
  const DURATION_UNITS = { ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 };

  /** "90s" → 90000; null for anything that is not a whole number and a unit (ms, s, m, h, d). */
  function parseDuration(text) {
    const match = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(text || '');
    return match && +match[1] > 0 ? +match[1] * DURATION_UNITS[match[2]] : null;
  }

  /** Milliseconds as the server reads a duration: "30s", or "2500ms" when not whole seconds. */
  function durationText(ms) {
    return ms % 1000 === 0 ? ms / 1000 + 's' : ms + 'ms';
  }

  function svgElement(name, attributes) {
    const node = document.createElementNS(SVG_NS, name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    return node;
  }

  /**
   * What a refused history request shows (and says in livebind:error). A location that never
   * existed is an empty history (200); 404 is a server that keeps no history (no --data, or
   * --history 0).
   */
  function historyProblem(status, problem) {
    const detail = problem && (problem.detail || problem.title);
    if (status === 404) return 'history is off on this server';
    return `history unavailable (${status})` + (detail ? ': ' + detail : '');
  }

  function bindChart(el, text, ctx) {
    const [path, format] = splitFormat(el, 'data-lb-chart', text, el.getAttribute('data-lb-format') || 'number:maximumFractionDigits=2');
    const windowText = (el.getAttribute('data-lb-window') || '1h').trim();
    const span = parseDuration(windowText);
    const stepText = el.getAttribute('data-lb-step');
    const step = stepText ? parseDuration(stepText) : span && Math.max(1, Math.ceil(span / 120 / 1000)) * 1000;
    if (!span || !step) {
      raise(el, 'data-lb-chart', text, `bad duration "${span ? stepText : windowText}" (a whole number and ms, s, m, h or d)`);
      return null;
    }
    if (path.trim().startsWith('.')) {
      raise(el, 'data-lb-chart', text, 'data-lb-chart needs a path that starts with a model');
      return null;
    }
    const r = resolve(el, 'data-lb-chart', path, ctx);
    if (!r) return null;

    const svg = svgElement('svg', { class: 'lb-chart', viewBox: `0 0 ${CHART.width} ${CHART.height}`, width: CHART.width, height: CHART.height,
                                    role: 'img', 'aria-label': `${path.trim()}, last ${windowText}` });
    const line = svgElement('polyline', { class: 'lb-chart-line', fill: 'none', stroke: 'currentColor', 'stroke-width': '1.5',
                                          'stroke-linejoin': 'round', 'vector-effect': 'non-scaling-stroke', points: '' });
    const dot = svgElement('circle', { class: 'lb-chart-dot', r: '2.5', fill: 'currentColor', visibility: 'hidden' });
    const label = (cls, y) => svgElement('text', { class: cls, x: CHART.width - 2, y, 'text-anchor': 'end', 'font-size': '10', fill: 'currentColor' });
    const max = label('lb-chart-max', 9);
    const min = label('lb-chart-min', CHART.height - 2);
    const last = label('lb-chart-last', CHART.height / 2);
    last.setAttribute('font-weight', 'bold');
    const note = svgElement('text', { class: 'lb-chart-note', x: CHART.plot / 2, y: CHART.height / 2 + 4, 'text-anchor': 'middle', 'font-size': '11', fill: 'currentColor' });
    svg.append(line, dot, max, min, last, note);
    el.replaceChildren(svg);

    // buckets: [{time, sum, count, min, max, last}] oldest first, numeric samples only; before: the value in
    // force at the window's start; id: the last event the history covers; skew: the server's clock
    // minus ours; pending: what the stream brought while a fetch was on its way; problem: why
    // there is no history (shown instead of the line).
    const chart = { buckets: [], before: undefined, id: null, skew: 0, pending: null, again: false, problem: null };
    const controller = new AbortController();
    let done = false;

    function show(state, message) {
      el.setAttribute('data-lb-chart-state', state);
      note.textContent = message || '';
    }

    async function load() {
      if (chart.pending) { chart.again = true; return; }
      chart.pending = [];
      if (chart.id === null) show('loading', 'loading…');
      const url = writeURL(r.scope.model, r.tokens) + `?history&from=-${windowText}&step=${durationText(step)}`;
      let answer = null;
      let status = 0;
      let problem = null;
      try {
        const response = await fetch(url, { headers: withToken({ Accept: 'application/json' }), cache: 'no-store', signal: controller.signal });
        const body = await response.json().catch(() => null);
        status = response.status;
        if (response.ok && body && Array.isArray(body.buckets)) answer = body;
        else problem = response.ok ? { detail: 'not a history answer' } : body;
      } catch (e) {
        problem = { detail: 'network error: ' + e.message };
      }
      if (done) return;
      const pending = chart.pending;
      chart.pending = null;
      chart.buckets = [];
      chart.before = undefined;
      chart.problem = answer ? null : historyProblem(status, problem);
      if (chart.problem) raise(el, 'data-lb-chart', text, chart.problem, { status });
      chart.id = answer && answer.id !== undefined && answer.id !== null ? String(answer.id) : '0';
      if (answer) {
        chart.skew = Date.parse(answer.to) - Date.now() || 0;
        if (answer.start && typeof answer.start.value === 'number') chart.before = answer.start.value;
        for (const b of answer.buckets) {
          if (typeof b.avg !== 'number') continue; // no numeric sample in it
          const count = b.count || 1;
          const or = (v) => (typeof v === 'number' ? v : b.avg); // first and last may not be numbers
          chart.buckets.push({ time: Date.parse(b.time), sum: b.avg * count, count, min: or(b.min), max: or(b.max), last: or(b.last) });
        }
      }
      for (const sample of pending) if (chart.pending) chart.pending.push(sample); else take(sample);
      if (!chart.pending) draw();
      if (chart.again) { chart.again = false; load(); }
    }

    /** One value the stream brought (or a snapshot): added unless the history answer has it. */
    function take(sample) {
      if (sample.id && Number(sample.id) <= Number(chart.id)) return;
      if (sample.kind === 'snapshot' || sample.kind === 'drop') { load(); return; }
      if (chart.problem || typeof sample.value !== 'number' || !Number.isFinite(sample.value)) return;
      const time = sample.at + chart.skew;
      const newest = chart.buckets[chart.buckets.length - 1];
      const start = Math.floor(time / step) * step;
      const v = sample.value;
      if (newest && start <= newest.time) { // (a clock that stepped back: the newest bucket)
        newest.sum += v;
        newest.count += 1;
        newest.min = Math.min(newest.min, v);
        newest.max = Math.max(newest.max, v);
        newest.last = v;
      } else {
        chart.buckets.push({ time: start, sum: v, count: 1, min: v, max: v, last: v });
      }
    }

    /**
     * Slides out what left the window, then draws the line (each bucket's average), the labels (the
     * lowest and highest value in the window, and the newest value) and the state.
     */
    function draw() {
      const now = Date.now() + chart.skew;
      const from = now - span;
      while (chart.buckets.length && chart.buckets[0].time + step <= from) chart.before = chart.buckets.shift().last;
      const points = chart.buckets.map((b) => [b.time, b.sum / b.count]);
      if (chart.before !== undefined) points.unshift([from, chart.before]);
      if (points.length === 1 && chart.before !== undefined) points.push([now, chart.before]); // unchanged all along
      if (!points.length) {
        line.setAttribute('points', '');
        dot.setAttribute('visibility', 'hidden');
        for (const t of [max, min, last]) t.textContent = '';
        if (chart.problem) show('error', chart.problem);
        else show('empty', 'no values in the last ' + windowText);
        return;
      }
      let low = chart.before !== undefined ? chart.before : Infinity;
      let high = chart.before !== undefined ? chart.before : -Infinity;
      for (const b of chart.buckets) { low = Math.min(low, b.min); high = Math.max(high, b.max); }
      const range = high - low || 1;
      const x = (t) => Math.max(0, Math.min(1, (t - from) / span)) * CHART.plot;
      const y = (v) => CHART.height - 4 - ((v - low) / range) * (CHART.height - 8);
      const xy = points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`);
      line.setAttribute('points', xy.join(' '));
      const [endTime, endValue] = points[points.length - 1];
      dot.setAttribute('cx', x(endTime).toFixed(1));
      dot.setAttribute('cy', y(endValue).toFixed(1));
      dot.setAttribute('visibility', 'visible');
      max.textContent = format(high);
      min.textContent = format(low);
      last.textContent = format(chart.buckets.length ? chart.buckets[chart.buckets.length - 1].last : chart.before);
      last.setAttribute('y', Math.max(22, Math.min(CHART.height - 14, y(endValue) + 4)).toFixed(1));
      show('live', '');
    }

    const tokens = r.tokens;
    const watcher = {
      update(change) {
        // A change at this location or above it (a change below is inside a value no line shows).
        if (!change || !isPrefix(change.tokens, tokens)) return;
        const sample = { id: change.id, kind: change.kind, value: r.scope.get(tokens), at: Date.now() };
        if (chart.pending) chart.pending.push(sample);
        else { take(sample); if (!chart.pending) draw(); }
      },
    };
    const unwatch = watch(r.scope, tokens, watcher, r.release);
    const ticker = setInterval(() => { if (!chart.pending && chart.id !== null) draw(); }, Math.max(step, 1000));
    load();
    return () => {
      done = true;
      controller.abort();
      clearInterval(ticker);
      unwatch();
      svg.remove();
    };
  }

  // ===========================================================================================
  // Virtual lists
  //   <tbody data-lb-each="m.rows" data-lb-virtual> renders only the rows in view in its scrolling
  //   ancestor, plus a margin of data-lb-overscan rows (default 10) on each side; spacers
  //   above and below stand in for the rest. Rows have one height: data-lb-row-height="px", or
  //   the first row's, measured once. An insert or remove above the view moves the scroll position
  //   by one row height, so what is in view stays put (and a focused field with it).
  // ===========================================================================================

  /** The nearest ancestor that scrolls vertically, or null for the document. */
  function scrollerOf(el) {
    const named = el.closest('[data-lb-scroll]');
    if (named) return named;
    for (let p = el.parentElement; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
      const overflow = getComputedStyle(p).overflowY;
      if (overflow === 'auto' || overflow === 'scroll') return p;
    }
    return null;
  }

  function makeSpacer(el, proto) {
    const spacer = document.createElement(proto.localName === 'tr' ? 'tr' : proto.localName === 'li' ? 'li' : 'div');
    spacer.setAttribute('aria-hidden', 'true');
    spacer.className = 'lb-spacer';
    if (spacer.localName === 'tr') {
      const cell = spacer.appendChild(document.createElement('td'));
      cell.style.padding = '0';
      cell.style.border = '0';
      cell.style.height = '0';
    }
    spacer.style.height = '0px';
    spacer.style.padding = '0';
    spacer.style.border = '0';
    spacer.style.listStyle = 'none';
    return spacer;
  }

  function bindVirtualEach(el, path, r, template, win) {
    const proto = template.content.firstElementChild;
    const scroller = scrollerOf(el);
    const overscan = Math.max(1, Number(el.getAttribute('data-lb-overscan')) || 10);
    let rowHeight = Number(el.getAttribute('data-lb-row-height')) || 0;
    const top = makeSpacer(el, proto);
    const bottom = makeSpacer(el, proto);
    template.after(top, bottom);
    const rows = []; // rendered rows, for elements start … start + rows.length - 1
    let start = 0;
    let offset = -1;   // the list's top inside the scroller's content, measured with the row height
    let shift = 0;     // pixels to scroll by after this flush (rows inserted or removed above the view)
    const view = { top: 0, height: 0 };
    if (scroller) scroller.style.overflowAnchor = 'none'; // we keep the anchor ourselves, exactly

    const list = () => {
      if (win && win.mode === 'window') return win.view;
      const v = r.scope.get(r.tokens);
      return Array.isArray(v) ? v : EMPTY;
    };
    const makeRow = (index) => makeEachRow(r, list, proto, index);

    const dropRow = dropEachRow;

    /** Window mode: asks for a window around the view when the view leaves the one there is. */
    function follow(first, last) {
      if (!win || win.mode !== 'window' || !win.loaded || last <= first) return;
      const end = Math.min(win.length, win.offset + win.rows.length);
      if (first >= win.offset && Math.min(last, win.length) <= end) return;
      const visible = last - first;
      const limit = windowLimit(Math.max(win.want.limit, 3 * visible));
      const offset = Math.max(0, Math.min(first - Math.floor((limit - visible) / 2), win.length - limit));
      if (offset !== win.want.offset || limit !== win.want.limit || !win.moving) moveWindow(win, offset, limit);
    }

    /** Window mode: the window's rows changed (`touched`: their window indexes, or null for all). */
    function refresh(touched) {
      if (win.moved) {
        // Rows were inserted or removed above: the rendered rows keep their elements at their new indexes.
        if (above(start + win.moved, false) || above(start, false)) shift += win.moved * rowHeight;
        start = Math.max(0, start + win.moved);
        renumber(0);
        win.moved = 0;
        touched = null;
      }
      const items = list();
      for (let k = 0; k < rows.length; k++) {
        const i = start + k;
        const row = rows[k];
        if (touched && !touched.has(i - win.offset)) continue;
        if (keyOf(items[i]) === row.key && items[i] !== undefined) notifyAll(row.trie, null);
        else replaceAt(i, null);
      }
      sync();
    }
    const windowList = win && {
      touched: new Set(),
      all: false,
      edits: [],
      changed(rowsChanged, edits) {
        if (rowsChanged === null) this.all = true;
        else for (const j of rowsChanged) this.touched.add(j);
        if (edits) this.edits.push(...edits);
        afterFlush.add(this.run);
      },
      run: () => {
        const touched = windowList.all ? null : windowList.touched;
        windowList.all = false;
        windowList.touched = new Set();
        // Inserts and removes first, row by row as without a window: rows keep their elements (and
        // focus), and one above the view moves the scroll position with it.
        for (const edit of windowList.edits.splice(0)) {
          if (edit.kind === 'insert') insertAt(edit.at); else removeAt(edit.at);
        }
        refresh(touched);
      },
    };
    if (win) win.lists.add(windowList);

    function readView() {
      if (scroller) {
        view.top = scroller.scrollTop;
        view.height = scroller.clientHeight;
      } else {
        view.top = global.scrollY;
        view.height = global.innerHeight;
      }
    }

    /** The first and past-the-end element the view needs now. */
    function wanted(count) {
      if (!rowHeight) return [0, Math.min(count, 1)]; // one row, to measure
      const from = Math.floor((view.top - offset) / rowHeight) - overscan;
      const to = Math.ceil((view.top - offset + Math.max(view.height, rowHeight)) / rowHeight) + overscan;
      const first = Math.max(0, Math.min(from, count));
      return [first, Math.max(first, Math.min(to, count))];
    }

    function measure() {
      if (!rows.length) return;
      if (!rowHeight) rowHeight = rows[0].el.getBoundingClientRect().height;
      const base = scroller ? scroller.getBoundingClientRect().top - scroller.scrollTop + scroller.clientTop : -global.scrollY;
      offset = top.getBoundingClientRect().top - base;
    }

    /** Makes the rendered rows the ones in view; sets the spacers. Called after a flush and on scroll. */
    function sync() {
      const count = list().length;
      if (shift) {
        readView();
        if (scroller) scroller.scrollTop = view.top + shift; else global.scrollBy(0, shift);
        shift = 0;
      }
      readView();
      let [first, last] = wanted(count);
      const end = start + rows.length;
      if (first >= end || last <= start) {
        for (const row of rows) dropRow(row);
        rows.length = 0;
        start = first;
      }
      while (rows.length && start < first) { dropRow(rows.shift()); start += 1; }
      while (rows.length && start + rows.length > last) dropRow(rows.pop());
      if (!rows.length) start = first;
      const before = [];
      while (start > first) { start -= 1; before.push(makeRow(start)); }
      if (before.length) {
        before.reverse();
        rows.unshift(...before);
        top.after(...before.map((row) => row.el));
      }
      const after = [];
      while (start + rows.length + after.length < last) after.push(makeRow(start + rows.length + after.length));
      if (after.length) {
        rows.push(...after);
        bottom.before(...after.map((row) => row.el));
      }
      if (!rowHeight || offset < 0) {
        measure();
        if (rowHeight) return sync();
      }
      follow(first, last);
      top.style.height = start * rowHeight + 'px';
      bottom.style.height = Math.max(0, count - start - rows.length) * rowHeight + 'px';
    }

    const later = () => afterFlush.add(sync);

    function renumber(from) {
      for (let i = from; i < rows.length; i++) rows[i].index = start + i;
    }

    /** Whether element i lies wholly above the view (so a change there must not move what is seen). */
    function above(i, inclusiveEnd) {
      if (!rowHeight) return false;
      return offset + (i + (inclusiveEnd ? 1 : 0)) * rowHeight <= view.top;
    }

    function insertAt(i) {
      if (i < start || (i === start && above(i))) {
        if (above(i)) shift += rowHeight;
        start += 1;
        renumber(0);
      } else if (i <= start + rows.length) {
        const row = makeRow(i);
        const k = i - start;
        (k < rows.length ? rows[k].el : bottom).before(row.el);
        rows.splice(k, 0, row);
        renumber(k + 1);
      }
      later();
    }

    function removeAt(i) {
      if (i < start) {
        if (above(i, true)) shift -= rowHeight;
        start -= 1;
        renumber(0);
      } else if (i < start + rows.length) {
        const k = i - start;
        if (above(i, true)) shift -= rowHeight;
        dropRow(rows.splice(k, 1)[0]);
        renumber(k);
      }
      later();
    }

    function replaceAt(i, change) {
      const row = rows[i - start];
      if (!row) return;
      if (keyOf(list()[i]) === row.key) return notifyAll(row.trie, change);
      const fresh = makeRow(i);
      row.el.replaceWith(fresh.el);
      row.alive = false;
      unbindTree(row.el);
      rows[i - start] = fresh;
    }

    /** The whole array changed (snapshot, resync, set): rows keep their nodes where the element kept its identity. */
    function reconcile(change) {
      const items = list();
      for (let k = 0; k < rows.length; k++) {
        const i = start + k;
        if (i >= items.length) break;
        if (keyOf(items[i]) === rows[k].key) notifyAll(rows[k].trie, change || null);
        else replaceAt(i, change);
      }
      if (flushing) later(); else sync();
    }

    const watcher = eachWatcher(list, {
      reconcile, insertAt, removeAt, replaceAt,
      // A move is a remove and an insert here: either end may lie outside the rendered rows.
      moveRow: (from, to) => { removeAt(from); insertAt(to); },
      rowAt: (i) => rows[i - start], // rendered rows begin at element `start`
    });

    const target = scroller || global;
    const onScroll = () => sync();
    target.addEventListener('scroll', onScroll, { passive: true });
    const resize = typeof ResizeObserver === 'function' ? new ResizeObserver(() => { offset = -1; sync(); }) : null;
    if (resize) resize.observe(scroller || document.documentElement);
    const unwatch = watch(r.scope, r.tokens, watcher, r.release);
    return () => {
      unwatch();
      target.removeEventListener('scroll', onScroll);
      if (resize) resize.disconnect();
      afterFlush.delete(sync);
      if (win) { win.lists.delete(windowList); afterFlush.delete(windowList.run); }
      for (const row of rows) dropRow(row);
      rows.length = 0;
      top.remove();
      bottom.remove();
    };
  }

  // ===========================================================================================
  // Path subscriptions
  //   LiveBind.subscribe('sensor/readings') streams one location of a model (GET /events?sub=…)
  //   instead of the whole model. Bindings and LiveBind.on listeners made while a subscription
  //   covers their path use it too, so a page that shows one part of a large model downloads that
  //   part and hears only its changes. The cache then holds a skeleton of the model: the objects on
  //   the way to each location, and the location's value (events carry absolute paths, so they
  //   apply to it as they are). A location whose model the page also uses whole, and every location
  //   on a server without ?sub=, is served by the whole model (mode `whole`); one inside another
  //   location rides on that one (mode `covered`).
  // ===========================================================================================

  const locations = new Map(); // "model/pointer" → { key, model, tokens, pointer, uses, mode }

  /** Whether `prefix` is `tokens` or a path above it. */
  function isPrefix(prefix, tokens) {
    if (prefix.length > tokens.length) return false;
    for (let i = 0; i < prefix.length; i++) if (String(prefix[i]) !== String(tokens[i])) return false;
    return true;
  }

  /** Counts one use of the location `tokens` of `model` (registering it); returns its release (safe twice). */
  function useLocation(model, tokens) {
    const key = model + tokensPointer(tokens);
    let loc = locations.get(key);
    if (!loc) {
      loc = { key, model, tokens: tokens.slice(), pointer: tokensPointer(tokens), uses: 0, mode: 'location' };
      locations.set(key, loc);
      // A resumed stream gets a snapshot of every location; a server without ?sub= needs a fresh one,
      // with the model's snapshot.
      connection.schedule(connection.subs !== false);
    }
    return holdLocation(loc);
  }

  function holdLocation(loc) {
    loc.uses += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      loc.uses -= 1;
      if (loc.uses > 0 || locations.get(loc.key) !== loc) return;
      locations.delete(loc.key);
      clearTimeout(connection.narrowTimer);
      connection.narrowTimer = setTimeout(() => connection.narrow(), config.narrowDelay);
    };
  }

  /**
   * Counts one use of a path: of the location subscription that covers it if there is one, else of
   * its whole model. Returns the release (safe to call twice).
   */
  function usePath(model, tokens, el, attribute, path) {
    for (const loc of locations.values()) {
      if (loc.model === model && isPrefix(loc.tokens, tokens)) return holdLocation(loc);
    }
    return useModel(model, el, attribute, path);
  }

  /**
   * A location's `snapshot`: its value goes into the model's skeleton. A cached copy of the whole
   * model is stale once its model is streamed by locations (a stream never has both): it is replaced.
   */
  function applyLocationSnapshot(data, id) {
    let entry = models.get(data.model);
    if (!entry || !entry.partial) {
      entry = { value: {}, rev: data.rev, partial: true };
      models.set(data.model, entry);
    }
    const tokens = pointerTokens(data.path);
    let node = entry.value;
    for (let i = 0; i < tokens.length - 1; i++) {
      let next = lookup(node, [tokens[i]]);
      if (next === null || typeof next !== 'object') putMember(node, tokens[i], (next = {}));
      node = next;
    }
    const last = tokens[tokens.length - 1];
    if (data.exists === false) {
      if (Array.isArray(node)) node[+last] = undefined; else delete node[last];
    } else if (Array.isArray(node)) {
      node[+last] = data.value;
    } else {
      putMember(node, last, data.value);
    }
    entry.rev = data.rev;
    if (data.exists !== false || data.rev) knownModels.add(data.model);
    deliver({ model: data.model, path: data.path, tokens, kind: 'snapshot', value: data.value, rev: data.rev, id });
  }

  // ===========================================================================================
  // Views
  //   <tbody data-lb-each="orders.items" data-lb-where="status:eq:open" data-lb-order="-time"
  //   data-lb-limit="20"> shows the server's view of the array (GET /events?sub=orders/items;
  //   where=…;order=…;limit=20): only the shown rows come, in the view's coordinates, and the list
  //   follows them row by row. When the page streams the model whole anyway (or the server has no
  //   ?sub=), the view is arranged here from the model's value, by the same rules
  //   (docs/Bindings.md, "Views").
  // ===========================================================================================

  const views = new Map(); // "model/pointer;where=…" → view

  /** The view's parameters as a `sub` writes them, from data-lb-where, -order, -offset and -limit. */
  function viewText(el) {
    const parts = [];
    for (const name of ['where', 'order', 'offset', 'limit']) {
      const value = el.getAttribute('data-lb-' + name);
      if (value !== null && value.trim() !== '') parts.push(name + '=' + value.trim());
    }
    return parts.join(';');
  }

  /** Registers a view of an array (`query` from parseView); returns {view, release}. */
  function useView(model, tokens, text, query) {
    const key = model + tokensPointer(tokens) + ';' + text;
    let view = views.get(key);
    if (!view) {
      view = {
        key, model, tokens: tokens.slice(), pointer: tokensPointer(tokens), text, query, rows: [], offset: 0, length: 0,
        rev: undefined, loaded: false, mode: 'view', uses: 0, unwatchWhole: null,
      };
      // Its rows are the view's, not the array's: an edit inside one has nowhere right to go.
      const readOnly = () => { throw { status: 0, detail: 'the rows of a view (data-lb-where, data-lb-order) are read-only: edit the array itself' }; };
      view.scope = { model, trie: makeNode(), loaded: () => view.loaded, get: (t) => lookup(view.rows, t), pointer: readOnly };
      views.set(key, view);
      connection.schedule(connection.subs !== false);
    }
    return { view, release: holdShared(view, () => { views.delete(key); arrangeHere(view, false); }) };
  }

  /** Starts (or stops) arranging `view` here from its model's value, which the page streams whole. */
  function arrangeHere(view, on) {
    if (!on) {
      if (view.unwatchWhole) view.unwatchWhole();
      view.unwatchWhole = null;
      return;
    }
    if (view.unwatchWhole) return;
    const scope = modelScope(view.model);
    const update = () => {
      const value = scope.get(view.tokens);
      const arranged = arrange(view.query, Array.isArray(value) ? value : EMPTY);
      view.rows = arranged.rows;
      view.offset = view.query.offset;
      view.length = arranged.matching;
      view.loaded = scope.loaded();
      notifyAll(view.scope.trie, { kind: 'snapshot', tokens: [] });
    };
    view.unwatchWhole = watch(scope, view.tokens, { update, handle: update }, null);
  }

  /** The view an event of a view belongs to (events of views name them in `view`). */
  function viewOf(data) {
    const path = data.path !== undefined ? data.path : data.changes && data.changes.length ? data.changes[0].path : undefined;
    if (path === undefined) return null;
    for (const view of views.values()) {
      if (view.mode === 'view' && view.model === data.model && view.text === data.view &&
          (path === view.pointer || path.startsWith(view.pointer + '/'))) return view;
    }
    return null;
  }

  function applyViewEvent(view, type, data) {
    if (data.rev !== undefined) view.rev = data.rev;
    if (data.window) { view.offset = data.window.offset; view.length = data.window.length; }
    if (type === 'length') return;
    if (type === 'snapshot' || (type === 'set' && data.path === view.pointer)) {
      view.rows = Array.isArray(data.value) ? data.value : [];
      view.loaded = true;
      notifyAll(view.scope.trie, { kind: 'snapshot', tokens: [] });
      return;
    }
    const changes = type === 'batch' ? data.changes : [Object.assign({ kind: type }, data)];
    for (const c of changes) {
      const change = {
        kind: c.kind, tokens: pointerTokens(c.path || '').slice(view.tokens.length), value: c.value, index: c.index,
        from: c.from, to: c.to, key: c.key,
      };
      const entry = { value: view.rows };
      if (!applyToEntry(entry, change)) return connection.restart(); // out of step: start over
      view.rows = entry.value;
      notify(view.scope.trie, change.tokens, 0, change);
    }
  }

  /** A `data-lb-each` over a view of the array at `path`. */
  function bindViewEach(el, path, template) {
    let parsed;
    let query;
    const text = viewText(el);
    try {
      parsed = parsePath(path);
      if (parsed.relative) throw new Error('a view (data-lb-where, data-lb-order) is of a model\'s array, not inside a data-lb-each template');
      query = parseView(text);
    } catch (e) {
      raise(el, 'data-lb-each', path, e.message);
      return null;
    }
    const { view, release } = useView(parsed.model, parsed.tokens, text, query);
    const list = () => (Array.isArray(view.rows) ? view.rows : EMPTY);
    const r = { scope: view.scope, tokens: [], release };
    // Virtual like any list: asked for, or on its own past `virtualAfter` rows in a scrolling container.
    const virtual = el.getAttribute('data-lb-virtual');
    if (virtual !== null && virtual !== 'off') return bindVirtualEach(el, path, r, template, null);
    return bindWholeEach(el, path, r, template, list, turnsVirtual(el, path, list, virtual));
  }

  // The view grammar (the server's, docs/Bindings.md "Views"), for views arranged here.

  const VIEW_OPERATORS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'contains', 'prefix', 'match', 'in'];

  /** `where=…;order=…;offset=K;limit=N` → { keep(element), order: [{path, descending}], offset, limit }. */
  function parseView(text) {
    const query = { keep: () => true, order: [], offset: 0, limit: Infinity };
    for (const part of text ? text.split(';') : []) {
      const eq = part.indexOf('=');
      const name = part.slice(0, eq), value = part.slice(eq + 1);
      if (name === 'where') query.keep = parseWhere(value);
      else if (name === 'order') query.order = value.split(',').map((key) => {
        const descending = key[0] === '-';
        return { path: elementPath(descending ? key.slice(1) : key, 'order'), descending };
      });
      else if (name === 'offset' || name === 'limit') {
        if (!/^[0-9]+$/.test(value)) throw new Error(`${name} must be a whole number`);
        query[name] = +value;
      }
    }
    return query;
  }

  function elementPath(text, part) {
    if (text === '.') return [];
    if (!/^[A-Za-z0-9_$@-]+(\.[A-Za-z0-9_$@-]+)*$/.test(text)) throw new Error(`${part}: '${text}' is not a key path`);
    return text.split('.');
  }

  function parseWhere(text) {
    let at = 0;
    const fail = (reason) => { throw new Error(`where: ${reason} at character ${at + 1}`); };
    const value = () => {
      if (text[at] === '"') {
        let end = at + 1;
        while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
        const raw = text.slice(at, end + 1);
        at = end + 1;
        try { return JSON.parse(raw); } catch (e) { return fail('a quoted value is not a JSON string'); }
      }
      const start = at;
      while (at < text.length && !',():"; '.includes(text[at])) at += 1;
      if (at === start) fail('a value is missing');
      const word = text.slice(start, at);
      try {
        const parsed = JSON.parse(word);
        if (parsed === null || typeof parsed !== 'object') return parsed;
      } catch (e) { /* a bare word */ }
      return word;
    };
    const expression = (depth) => {
      if (depth > 16) fail('and/or/not nest deeper than 16');
      for (const word of ['and', 'or', 'not']) {
        if (!text.startsWith(word + '(', at)) continue;
        at += word.length + 1;
        const parts = [expression(depth + 1)];
        while (text[at] === ',') { at += 1; parts.push(expression(depth + 1)); }
        if (text[at] !== ')') fail("')' expected");
        at += 1;
        if (word === 'and') return (e) => parts.every((p) => p(e));
        if (word === 'or') return (e) => parts.some((p) => p(e));
        if (parts.length !== 1) fail('not(…) takes one condition');
        return (e) => !parts[0](e);
      }
      const colon = text.indexOf(':', at);
      if (colon < 0) fail("':' expected");
      const path = elementPath(text.slice(at, colon), 'where');
      at = colon + 1;
      const next = text.indexOf(':', at);
      const op = next < 0 ? '' : text.slice(at, next);
      if (!VIEW_OPERATORS.includes(op)) fail(`'${op}' is no operator`);
      at = next + 1;
      let values;
      if (op === 'in') {
        if (text[at] !== '(') fail("'(' expected");
        at += 1;
        values = [value()];
        while (text[at] === ',') { at += 1; values.push(value()); }
        if (text[at] !== ')') fail("')' expected");
        at += 1;
      } else {
        values = [value()];
      }
      return (e) => holds(lookupMissing(e, path), op, values);
    };
    const keep = expression(0);
    if (at !== text.length) fail(`unexpected '${text.slice(at)}'`);
    return keep;
  }

  const MISSING = Symbol('missing');

  function lookupMissing(element, path) {
    let node = element;
    for (const name of path) {
      if (Array.isArray(node)) {
        if (!/^[0-9]+$/.test(name) || +name >= node.length) return MISSING;
        node = node[+name];
      } else if (node !== null && typeof node === 'object' && Object.prototype.hasOwnProperty.call(node, name)) {
        node = node[name];
      } else {
        return MISSING;
      }
    }
    return node;
  }

  function jsonKind(v) {
    if (v === MISSING || v === undefined) return -1;
    if (v === null) return 0;
    if (typeof v === 'boolean') return 1;
    if (typeof v === 'number') return 2;
    if (typeof v === 'string') return 3;
    return Array.isArray(v) ? 4 : 5;
  }

  function jsonEqual(a, b) {
    const kind = jsonKind(a);
    if (kind !== jsonKind(b)) return false;
    if (kind === 4) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
    if (kind === 5) {
      const keys = Object.keys(a);
      return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
    }
    return a === b;
  }

  /** Strings by Unicode scalars (code points), not UTF-16 units. */
  function compareText(a, b) {
    const x = Array.from(a), y = Array.from(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const d = x[i].codePointAt(0) - y[i].codePointAt(0);
      if (d) return d < 0 ? -1 : 1;
    }
    return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
  }

  function compareJSON(a, b) {
    const ka = jsonKind(a), kb = jsonKind(b);
    if (ka !== kb) return ka < kb ? -1 : 1;
    switch (ka) {
      case 1: case 2: return a === b ? 0 : a < b ? -1 : 1;
      case 3: return compareText(a, b);
      case 4:
        for (let i = 0; i < Math.min(a.length, b.length); i++) { const d = compareJSON(a[i], b[i]); if (d) return d; }
        return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
      case 5: return compareText(JSON.stringify(a), JSON.stringify(b));
      default: return 0;
    }
  }

  function holds(found, op, values) {
    if (found === MISSING) return op === 'ne';
    const value = values[0];
    const sameKind = jsonKind(found) === jsonKind(value) && (typeof found === 'number' || typeof found === 'string');
    switch (op) {
      case 'eq': return jsonEqual(found, value);
      case 'ne': return !jsonEqual(found, value);
      case 'lt': return sameKind && compareJSON(found, value) < 0;
      case 'le': return sameKind && compareJSON(found, value) <= 0;
      case 'gt': return sameKind && compareJSON(found, value) > 0;
      case 'ge': return sameKind && compareJSON(found, value) >= 0;
      case 'contains':
        if (Array.isArray(found)) return found.some((x) => jsonEqual(x, value));
        return typeof found === 'string' && typeof value === 'string' && found.includes(value);
      case 'prefix': return typeof found === 'string' && typeof value === 'string' && found.startsWith(value);
      case 'match': return typeof found === 'string' && typeof value === 'string' && found.toLowerCase().includes(value.toLowerCase());
      case 'in': return values.some((v) => jsonEqual(found, v));
      default: return false;
    }
  }

  /** The shown rows of `elements` and how many match (a stable sort, as the server's). */
  function arrange(query, elements) {
    const kept = elements.filter((e) => query.keep(e));
    if (query.order.length) {
      kept.sort((a, b) => {
        for (const key of query.order) {
          const d = compareJSON(lookupMissing(a, key.path), lookupMissing(b, key.path));
          if (d) return key.descending ? -d : d;
        }
        return 0;
      });
    }
    return { rows: kept.slice(query.offset, query.offset + query.limit), matching: kept.length };
  }

  // ===========================================================================================
  // Array windows
  //   <tbody data-lb-each="big.rows" data-lb-virtual data-lb-window="300"> asks the server for
  //   only a window of the array (GET /events?sub=big/rows;offset=K;limit=N) and moves it as the
  //   list scrolls (PATCH /events/{stream}). The page then holds the window's rows, never the
  //   array. Window events are in window coordinates; they are applied to the window's rows here and
  //   the list redraws the rows in view. When the server has no path subscriptions (no `stream`
  //   event first, or a 400), or the page also binds the model as a whole, the list falls back to
  //   the whole model, as without data-lb-window.
  // ===========================================================================================

  const windows = new Map(); // "model/pointer" → window

  /** Registers a window on an array; returns {win, release}. */
  function useWindow(model, tokens, limit) {
    const key = model + tokensPointer(tokens);
    let win = windows.get(key);
    if (!win) {
      win = {
        key, model, tokens, pointer: tokensPointer(tokens), rows: [], offset: 0, length: 0, rev: undefined,
        loaded: false, mode: 'window', want: { offset: 0, limit }, moving: false, uses: 0, lists: new Set(), moved: 0,
      };
      win.view = new Proxy([], {
        get(target, prop) {
          if (prop === 'length') return win.length;
          if (typeof prop === 'string' && /^(0|[1-9][0-9]*)$/.test(prop)) return win.rows[+prop - win.offset];
          return target[prop];
        },
      });
      windows.set(key, win);
      connection.schedule();
    }
    return { win, release: holdShared(win, () => windows.delete(key)) };
  }

  /**
   * Takes one use of a view or window the page's elements share, and returns its release: the last
   * release forgets it (`forget`) and the stream narrows after `narrowDelay` (one reconnect for a
   * burst of releases). Releasing twice counts once.
   */
  function holdShared(shared, forget) {
    shared.uses += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      shared.uses -= 1;
      if (shared.uses > 0) return;
      forget();
      clearTimeout(connection.narrowTimer);
      connection.narrowTimer = setTimeout(() => connection.narrow(), config.narrowDelay);
    };
  }

  /** The window a location event belongs to, when that window is served as a window. */
  function windowOf(data) {
    if (data.window === undefined) return null; // a location's event (windows' events all say where they are)
    const path = data.path !== undefined ? data.path : data.changes && data.changes.length ? data.changes[0].path : undefined;
    if (path === undefined) return null;
    for (const win of windows.values()) {
      if (win.mode === 'window' && win.model === data.model && (path === win.pointer || path.startsWith(win.pointer + '/'))) return win;
    }
    return null;
  }

  function applyWindowEvent(win, type, data) {
    if (data.rev !== undefined) win.rev = data.rev;
    const at = (w) => { if (w) { win.offset = w.offset; win.length = w.length; } };
    if (type === 'snapshot' || (type === 'set' && data.path === win.pointer)) {
      const old = win.rows;
      const oldOffset = win.offset;
      win.rows = Array.isArray(data.value) ? data.value : [];
      if (data.window) at(data.window); else { win.offset = 0; win.length = win.rows.length; }
      // Rows inserted or removed above the window arrive as a `set` of the shifted rows: by the
      // rows' keys, tell the lists how far their rows moved, so what is in view can stay put.
      if (type === 'set' && win.loaded && win.offset === oldOffset) win.moved += shiftOf(old, win.rows);
      win.loaded = true;
      return signalWindow(win, null);
    }
    if (type === 'length') {
      at(data.window);
      return signalWindow(win, null);
    }
    const changes = type === 'batch' ? data.changes.map((c) => Object.assign({ kind: c.kind || c.op }, c)) : [Object.assign({ kind: type }, data)];
    const depth = win.tokens.length;
    const touched = new Set();
    const edits = []; // inserts and removes at absolute indexes, for the lists to follow row by row
    let structural = false;
    for (const c of changes) {
      const tokens = pointerTokens(c.path || '');
      if (tokens.length === depth) {
        structural = true;
        const rows = win.rows;
        switch (c.kind) {
          case 'insert': rows.splice(c.index, 0, c.value); edits.push({ kind: 'insert', at: win.offset + c.index }); break;
          case 'remove': rows.splice(c.index, 1); edits.push({ kind: 'remove', at: win.offset + c.index }); break;
          case 'replace': case 'set': if (c.index !== undefined) rows[c.index] = c.value; break;
          case 'move': rows.splice(c.to, 0, rows.splice(c.from, 1)[0]); break;
          default: break;
        }
      } else if (tokens.length > depth) {
        const j = +tokens[depth];
        const entry = { value: win.rows[j] };
        const change = Object.assign({}, c, { tokens: tokens.slice(depth + 1) });
        if (applyToEntry(entry, change)) {
          win.rows[j] = entry.value;
          touched.add(j);
        }
      }
    }
    at(data.window);
    signalWindow(win, structural ? null : touched, edits);
  }

  /** How many places keyed rows moved down (negative: up) from `before` to `after`, or 0 when unknown. */
  function shiftOf(before, after) {
    if (!before.length || !after.length) return 0;
    const first = keyOf(before[0]);
    if (first === undefined) return 0;
    const down = after.findIndex((row) => keyOf(row) === first);
    if (down >= 0) return down;
    const newFirst = keyOf(after[0]);
    const up = newFirst === undefined ? -1 : before.findIndex((row) => keyOf(row) === newFirst);
    return up > 0 ? -up : 0;
  }

  /** Tells the window's lists to redraw after this flush: `rows` the window indexes changed, or null for all. */
  function signalWindow(win, rows, edits) {
    for (const list of win.lists) list.changed(rows, edits);
  }

  /** `limit` rows, or fewer when the server's --max-window (once known) is smaller. */
  function windowLimit(limit) {
    return connection.maxWindow ? Math.min(limit, connection.maxWindow) : limit;
  }

  /**
   * Whether `problem` refused a window of `asked` rows for the server's --max-window: then the limit
   * is learned (the caller asks again within it). False for any other problem, or a limit no smaller.
   */
  function learnWindowLimit(problem, asked) {
    if (!problem || problem.setting !== 'max-window' || !Number.isInteger(problem.limit) || problem.limit < 1) return false;
    if (problem.limit >= asked) return false;
    connection.maxWindow = problem.limit;
    return true;
  }

  /** Moves the window (PATCH /events/{stream}); one request at a time, the newest wish wins. */
  async function moveWindow(win, offset, limit) {
    win.want = { offset, limit };
    if (win.moving || win.mode !== 'window' || !connection.streamId) return;
    win.moving = true;
    try {
      while (win.want.offset !== win.asked || win.want.limit !== win.askedLimit) {
        const { offset: o, limit: l } = win.want;
        win.asked = o;
        win.askedLimit = l;
        const response = await fetch(config.server + '/events/' + encodeURIComponent(connection.streamId), {
          method: 'PATCH',
          headers: withToken({ 'Content-Type': 'application/json' }),
          body: JSON.stringify({ sub: win.model + win.pointer, offset: o, limit: l }),
        });
        if (!response.ok) {
          const problem = await response.json().catch(() => null);
          if (learnWindowLimit(problem, l)) {
            win.want = { offset: win.want.offset, limit: windowLimit(win.want.limit) };
            continue;
          }
          raise(null, 'data-lb-window', dotted(win.model, win.tokens), `could not move the window (${response.status}): ${(problem && problem.detail) || response.statusText}`,
            { status: response.status });
          break;
        }
      }
    } catch (e) {
      // the stream is being replaced; its URL carries the newest window
    } finally {
      win.moving = false;
    }
  }

  // ===========================================================================================
  // Walker
  //   One walk binds an element and its descendants; a MutationObserver walks nodes added later
  //   and tears down nodes removed for good (a moved node is still connected and is kept).
  // ===========================================================================================

  const bound = new WeakMap();     // element → { cleanups }
  const scanned = new WeakSet();   // elements the walker has visited
  const rowScopes = new WeakMap(); // data-lb-each copy root → its scope

  function bindElement(el, ctx) {
    let cleanups = null;
    for (const name of ATTRS) {
      const text = el.getAttribute(name);
      if (text === null) continue;
      let cleanup = null;
      try {
        cleanup = directives[name](el, text, ctx);
      } catch (e) {
        raise(el, name, text, 'internal error: ' + e.message);
      }
      if (cleanup) (cleanups || (cleanups = [])).push(cleanup);
    }
    if (cleanups) bound.set(el, { cleanups, ctx });
  }

  function walk(root, ctx) {
    const stack = [root];
    while (stack.length) {
      const el = stack.pop();
      if (scanned.has(el) || el.tagName === 'TEMPLATE') continue;
      scanned.add(el);
      const own = rowScopes.get(el);
      const scope = own || ctx;
      if (el.hasAttribute && hasDirective(el)) bindElement(el, scope);
      if (el.hasAttribute && el.hasAttribute('data-lb-each')) continue; // the each directive owns its children
      for (let c = el.lastElementChild; c; c = c.previousElementSibling) stack.push(c);
    }
  }

  function hasDirective(el) {
    for (const name of ATTRS) if (el.hasAttribute(name)) return true;
    return false;
  }

  function unbindElement(el) {
    const entry = bound.get(el);
    if (entry) {
      bound.delete(el);
      for (const cleanup of entry.cleanups) cleanup();
    }
    scanned.delete(el);
  }

  function unbindTree(root) {
    const stack = [root];
    while (stack.length) {
      const el = stack.pop();
      if (!scanned.has(el)) continue;
      unbindElement(el);
      for (let c = el.lastElementChild; c; c = c.previousElementSibling) stack.push(c);
    }
  }

  /** The scope an element added later lives in: the nearest enclosing data-lb-each copy, if any. */
  function scopeFor(el) {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const scope = rowScopes.get(p);
      if (scope) return scope;
    }
    return null;
  }

  const observer = new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === 'attributes') {
        const el = record.target;
        if (record.attributeName === PRESENCE_META) { presenceMetaChanged(el); continue; }
        if (!scanned.has(el)) continue;
        unbindTree(el);
        walk(el, scopeFor(el));
        continue;
      }
      for (const node of record.removedNodes) {
        if (node.nodeType === 1 && !node.isConnected) unbindTree(node);
      }
      for (const node of record.addedNodes) {
        if (node.nodeType === 1 && node.isConnected && !scanned.has(node)) walk(node, scopeFor(node));
      }
    }
  });

  // ===========================================================================================
  // Frame scheduling
  //   Events are queued as they arrive and applied together once per animation frame. Applying
  //   only writes to the DOM; nothing here reads layout. A hidden tab gets no frames: there each
  //   network chunk is applied as it arrives, and the queue never holds more than config.maxQueue.
  //   Events of a stream that was replaced by a fresh one (new snapshots) are dropped.
  // ===========================================================================================

  const queue = [];
  let frame = 0;
  let frameIsTimer = false;
  const stats = {
    events: 0, changes: 0, frames: 0, applyMs: 0, longestApplyMs: 0,
    /** Milliseconds from an event's arrival to its application: sum and longest. */
    lagMs: 0, longestLagMs: 0,
    /** Events dropped because their stream was replaced; streams opened. */
    dropped: 0, streams: 0,
    /** The most events that ever waited for a frame. */
    longestQueue: 0,
    /**
     * Set it to an array (benchmarks) and every applied event adds [arrival, frame]: when it
     * arrived and the timestamp of the animation frame that applied it (performance.now() time;
     * the time of the flush outside frames). At most 100,000 entries.
     */
    trace: null,
  };
  const afterFlush = new Set(); // run once after the events of a flush are applied (virtual lists)

  /**
   * Queues one event. `closes`: it ends its group (it carried the `id:`, or it is a `resync` whose
   * snapshots were empty); `whole`: the models its stream has whole (null: every model).
   */
  function enqueue(type, data, id, closes, whole) {
    queue.push({ type, data, id, closes, whole, generation: connection.generation, at: performance.now() });
    if (queue.length > stats.longestQueue) stats.longestQueue = queue.length;
    if (queue.length >= config.maxQueue) return flushNow();
    if (frame) return;
    frameIsTimer = document.hidden;
    frame = frameIsTimer ? setTimeout(flushQueue, 0) : requestAnimationFrame(flushQueue);
  }

  /** Applies what is queued now, without waiting for the frame. */
  function flushNow() {
    if (frame) {
      if (frameIsTimer) clearTimeout(frame); else cancelAnimationFrame(frame);
      frame = 0;
    }
    if (queue.length) flushQueue();
  }

  // A tab hidden after its frame was requested would never get it.
  document.addEventListener('visibilitychange', () => { if (document.hidden) flushNow(); });

  let appliedId = 0; // the id of the last event applied to the local copy

  /** Whether the event with this id (a write's answer) has reached the local copy. */
  function applied(id) {
    return Number(appliedId) >= Number(id);
  }

  let flushing = false;

  function flushQueue(frameTime) {
    frame = 0;
    flushing = true;
    const started = performance.now();
    const events = queue.splice(0, queue.length);
    stats.frames += 1;
    const trace = Array.isArray(stats.trace) && stats.trace.length < 100000 ? stats.trace : null;
    const at = typeof frameTime === 'number' ? frameTime : started;
    for (const event of events) {
      if (event.generation !== connection.generation) {
        stats.dropped += 1; // its stream was replaced: the new one's snapshots already hold it
        continue;
      }
      const lag = started - event.at;
      stats.lagMs += lag;
      if (lag > stats.longestLagMs) stats.longestLagMs = lag;
      if (trace) trace.push([event.at, at]);
      try {
        applyEvent(event);
        if (event.closes && resyncing) finishResync(event.id);
      } catch (e) {
        raise(null, null, null, `could not apply ${event.type} event ${event.id}: ${e.message}`);
      }
      stats.events += 1;
      if (event.id) appliedId = event.id;
    }
    flushing = false;
    const hooks = Array.from(afterFlush);
    afterFlush.clear();
    for (const hook of hooks) hook();
    const spent = performance.now() - started;
    stats.applyMs += spent;
    if (spent > stats.longestApplyMs) stats.longestApplyMs = spent;
    if (changeWaiters.size) for (const wake of Array.from(changeWaiters)) wake();
  }

  const changeWaiters = new Set();

  /** Resolves after the next flush that applied events, or after `ms`. */
  function nextFlush(ms) {
    return new Promise((resolve) => {
      const done = () => { clearTimeout(timer); changeWaiters.delete(done); resolve(); };
      const timer = setTimeout(done, ms);
      changeWaiters.add(done);
    });
  }

  /**
   * Between a `resync` and the end of its group (the snapshots that follow it, the last with the id):
   * {seen: the models they brought, whole: what the stream has whole, null for every model}.
   */
  let resyncing = null;

  /**
   * The end of the snapshots after a `resync`. They hold every model the stream has whole that
   * exists: one they left out is gone (dropped while the page was away, or an emptied presence room
   * after a server restart), so it leaves the cache as a `drop` takes it.
   */
  function finishResync(id) {
    const { seen, whole } = resyncing;
    resyncing = null;
    for (const [name, entry] of Array.from(models)) {
      if (entry.partial || seen.has(name) || (whole && !whole.has(name))) continue;
      dropModel(name, entry.rev, id);
    }
  }

  function dropModel(name, rev, id) {
    models.delete(name);
    knownModels.delete(name);
    deliver({ model: name, path: '', tokens: [], kind: 'drop', rev, id });
  }

  function applyEvent({ type, data, id, whole }) {
    if (type === 'stream') {
      connection.streamId = data.stream;
      if (Number.isInteger(data.maxWindow) && data.maxWindow > 0) connection.maxWindow = data.maxWindow;
      return;
    }
    if (data.view !== undefined) {
      const view = viewOf(data);
      if (view) applyViewEvent(view, type, data);
      emit(document, 'livebind:change', { model: data.model, path: data.path, kind: type, view: data.view, window: data.window, rev: data.rev, id });
      return;
    }
    const win = windows.size ? windowOf(data) : null;
    if (win) {
      applyWindowEvent(win, type, data);
      emit(document, 'livebind:change', { model: data.model, path: data.path, kind: type, window: data.window, rev: data.rev, id });
      return;
    }
    if (type === 'length') return;
    switch (type) {
      case 'snapshot': {
        if (data.path !== undefined) return applyLocationSnapshot(data, id);
        models.set(data.model, { value: data.value, rev: data.rev });
        knownModels.add(data.model);
        if (resyncing) resyncing.seen.add(data.model);
        deliver({ model: data.model, path: '', tokens: [], kind: 'snapshot', value: data.value, rev: data.rev, id });
        return;
      }
      case 'drop':
        return dropModel(data.model, data.rev, id);
      case 'resync':
        resyncing = { seen: new Set(), whole };
        emit(document, 'livebind:change', { kind: 'resync', reason: data.reason, id });
        for (const fn of anyListeners) fn(null, { kind: 'resync', reason: data.reason, id });
        return;
      case 'batch':
        // Inside a batch each change names its kind in "op".
        for (const c of data.changes) applyChange(Object.assign({ model: data.model, rev: data.rev, kind: c.op }, c), id);
        return;
      default:
        applyChange(Object.assign({ kind: type }, data), id);
    }
  }

  function applyChange(change, id) {
    change.tokens = pointerTokens(change.path || '');
    change.id = id;
    const entry = models.get(change.model);
    if (!entry) return;
    if (!applyToCache(change)) {
      raise(null, null, dotted(change.model, change.tokens), `change ${id} does not fit the local copy; reconnecting for a fresh snapshot`);
      connection.restart();
      return;
    }
    entry.rev = change.rev;
    deliver(change);
  }

  function deliver(change) {
    stats.changes += 1;
    const scope = modelScopes.get(change.model);
    if (scope) notify(scope.trie, change.tokens, 0, change);
    const detail = {
      model: change.model, path: change.path, kind: change.kind, value: change.value, index: change.index,
      from: change.from, to: change.to, key: change.key, rev: change.rev, id: change.id,
    };
    for (const fn of anyListeners) fn(detail.value, detail);
    emit(document, 'livebind:change', detail);
  }

  // ===========================================================================================
  // Stream reader
  //   fetch() and a small Server-Sent Events parser instead of EventSource: it sees the server's
  //   heartbeat comments (EventSource hides them), so a stream that went silent for two heartbeat
  //   intervals is noticed and replaced, and it can send the token as a header. Lines end in "\n"
  //   (the server's) or "\r\n". A long data line arriving in many chunks is joined once.
  // ===========================================================================================

  /**
   * Reads an SSE body to its end. `on.bytes()` per chunk, `on.event(type, data, id)` per event (id
   * is null when the event set none), `on.id(id)` per id sent without data, `on.comment()` per
   * comment line (a heartbeat), `on.chunk()` after the events of a chunk.
   */
  async function readEvents(body, on) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let pieces = [];
    let type = '';
    let data = [];
    let id = null;
    const line = (text) => {
      if (text === '') {
        if (data.length) on.event(type || 'message', data.join('\n'), id);
        else if (id !== null) on.id(id);
        type = ''; data = []; id = null;
        return;
      }
      if (text[0] === ':') { on.comment(); return; } // a heartbeat; on.bytes has seen it
      const colon = text.indexOf(':');
      const field = colon < 0 ? text : text.slice(0, colon);
      let value = colon < 0 ? '' : text.slice(colon + 1);
      if (value[0] === ' ') value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') type = value;
      else if (field === 'id') id = value;
    };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        if (on.bytes() === false) return;
        const text = decoder.decode(value, { stream: true });
        let from = 0;
        for (;;) {
          const end = text.indexOf('\n', from);
          if (end < 0) {
            if (from < text.length) pieces.push(text.slice(from));
            break;
          }
          let piece = text.slice(from, end);
          if (pieces.length) { pieces.push(piece); piece = pieces.join(''); pieces = []; }
          line(piece.endsWith('\r') ? piece.slice(0, -1) : piece);
          from = end + 1;
        }
        on.chunk();
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  // ===========================================================================================
  // Connection
  //   One stream for every model the page uses. New models → a fresh stream (with snapshots).
  //   Models no longer used → after config.narrowDelay, a resumed stream without them. A dropped
  //   or silent stream → reconnect after a backoff with jitter, resuming from the last event id
  //   (?lastEventId=); the server answers with what was missed or a resync.
  // ===========================================================================================

  const EVENT_TYPES = new Set(['stream', 'snapshot', 'set', 'insert', 'remove', 'replace', 'move', 'batch', 'drop', 'resync', 'length']);
  const knownModels = new Set();
  const modelUsers = new Map(); // model → Set of {el, attribute, path} until the model is seen
  const modelUses = new Map();  // model → how many bindings and listeners use it

  /**
   * Counts one use of a model and streams it. The returned function (safe to call twice) ends the
   * use: a model nobody uses any more leaves the stream, the cache and the watch trees.
   */
  function useModel(name, el, attribute, path) {
    modelUses.set(name, (modelUses.get(name) || 0) + 1);
    let user = null;
    if (!knownModels.has(name) && el) {
      user = { el, attribute, path };
      const users = modelUsers.get(name) || new Set();
      users.add(user);
      modelUsers.set(name, users);
    }
    connection.want(name);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const users = user && modelUsers.get(name);
      if (users) {
        users.delete(user);
        if (users.size === 0) modelUsers.delete(name);
      }
      const left = (modelUses.get(name) || 1) - 1;
      if (left > 0) modelUses.set(name, left);
      else {
        modelUses.delete(name);
        connection.unwant(name);
      }
    };
  }

  /** Forgets a model nobody uses: its cached value and, when nothing watches it, its scope. */
  function forgetModel(name) {
    models.delete(name);
    knownModels.delete(name);
    const scope = modelScopes.get(name);
    if (scope && !scope.trie.watchers && !scope.trie.children) modelScopes.delete(name);
  }

  const connection = {
    stream: null,     // { controller, lastByte }
    generation: 0,    // grows with every fresh (non-resumed) stream
    all: 0,           // how many "*" listeners want every model
    models: new Set(),
    lastId: '',
    attempt: 0,
    timer: 0,
    pending: 0,
    narrowTimer: 0,
    watchdog: 0,
    state: '',
    node: null,       // the cluster node serving the stream (its LiveBind-Node header), null on one server
    maxWindow: null,  // the most rows of a window (the server's --max-window), once its stream event or a 422 said
    streamId: null,   // the stream's id (its `stream` event), for moving windows
    subs: null,       // whether the server takes ?sub= (null: not known yet)
    keys: new Set(),  // presence keys the stream presents (?presence=), see Presence
    whole: null,      // the models the last URL asked for whole; null: every model

    want(name) {
      if (this.models.has(name)) return;
      this.models.add(name);
      if (!this.all) this.schedule();
    },

    unwant(name) {
      this.models.delete(name);
      clearTimeout(this.narrowTimer);
      this.narrowTimer = setTimeout(() => this.narrow(), config.narrowDelay);
    },

    wantAll() {
      this.all += 1;
      if (this.all === 1) this.schedule();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        this.all -= 1;
        if (this.all === 0) this.narrowTimer = setTimeout(() => this.narrow(), config.narrowDelay);
      };
    },

    /** Drops the models nobody uses any more: from the cache, and from the stream by resuming without them. */
    narrow() {
      this.narrowTimer = 0;
      if (this.all) return;
      let gone = false;
      const keep = new Set(this.models);
      for (const win of windows.values()) keep.add(win.model);
      for (const loc of locations.values()) keep.add(loc.model);
      for (const view of views.values()) keep.add(view.model);
      for (const name of Array.from(models.keys())) {
        if (!keep.has(name)) { forgetModel(name); gone = true; }
      }
      for (const name of Array.from(modelScopes.keys())) if (!keep.has(name)) forgetModel(name);
      if (this.pending) return; // a fresh stream is on its way anyway
      if (this.models.size === 0 && windows.size === 0 && locations.size === 0 && views.size === 0) {
        clearTimeout(this.timer);
        this.close();
        setState('idle');
      } else if (gone || this.stream) {
        this.open(true);
      }
    },

    /**
     * Opens a fresh stream soon, once for a burst of new models; with `resume`, a resumed one (enough
     * for new locations: a resumed stream gets a snapshot of each). A fresh one asked for wins.
     */
    schedule(resume) {
      if (this.pending && (this.pendingFresh || resume)) return;
      clearTimeout(this.pending);
      this.pendingFresh = !resume;
      this.pending = setTimeout(() => { this.pending = 0; this.open(!this.pendingFresh); }, 0);
    },

    pendingFresh: false,

    /** Presents a presence entry's key from now on: a resumed stream claims it (one reconnect per new key set). */
    present(key) {
      if (this.keys.has(key)) return;
      this.keys.add(key);
      this.schedule(true);
    },

    /**
     * Stops presenting `key`. With `reconnect` (its entry may still be there), a resumed stream
     * without it ends the claim now; otherwise the next reconnect leaves it out.
     */
    unpresent(key, reconnect) {
      if (!this.keys.delete(key)) return;
      if (reconnect && (this.stream || this.timer)) this.schedule(true);
    },

    restart() {
      this.open(false);
    },

    /** The stream's URL; sets `this.withSubs` when it asks for windows. */
    url(resume) {
      const params = new URLSearchParams();
      const whole = new Set(this.all ? [] : this.models);
      const subs = [];
      // Locations, outermost first: one inside another rides on it (the server refuses a location
      // twice, and a location in a model the stream has whole).
      const served = [];
      for (const loc of Array.from(locations.values()).sort((a, b) => a.tokens.length - b.tokens.length)) {
        if (this.subs === false || this.all || whole.has(loc.model)) {
          loc.mode = 'whole';
          if (!this.all) whole.add(loc.model);
        } else if (served.some((o) => o.model === loc.model && isPrefix(o.tokens, loc.tokens))) {
          loc.mode = 'covered';
        } else {
          loc.mode = 'location';
          served.push(loc);
          subs.push(loc.model + loc.pointer);
        }
      }
      for (const win of windows.values()) {
        // A model streamed whole cannot also have a window on the same stream (the server says 422);
        // a window inside a location is read from the location's value.
        if (served.some((o) => o.model === win.model && isPrefix(o.tokens, win.tokens))) {
          win.mode = 'whole';
        } else if (this.subs === false || this.all || whole.has(win.model)) {
          win.mode = 'whole';
          if (!this.all) whole.add(win.model);
        } else {
          win.mode = 'window';
          win.want.limit = windowLimit(win.want.limit);
          subs.push(`${win.model}${win.pointer};offset=${win.want.offset};limit=${win.want.limit}`);
        }
      }
      for (const view of views.values()) {
        // A model the stream has whole (or a server without ?sub=) cannot also have a view on it:
        // the view is arranged here from the model's value.
        if (this.subs === false || this.all || whole.has(view.model)) {
          view.mode = 'whole';
          if (!this.all) whole.add(view.model);
        } else {
          view.mode = 'view';
          subs.push(`${view.model}${view.pointer};${view.text}`);
        }
      }
      for (const view of views.values()) arrangeHere(view, view.mode === 'whole');
      this.withSubs = subs.length > 0;
      this.whole = this.all ? null : whole;
      for (const m of whole) params.append('model', m);
      for (const sub of subs) params.append('sub', sub);
      if (this.keys.size) params.set('presence', Array.from(this.keys).join(','));
      if (resume && this.lastId) params.set('lastEventId', this.lastId);
      const query = params.toString();
      return config.server + '/events' + (query ? '?' + query : '');
    },

    /** Opens the stream, first making a session for the token when the server offers them. */
    open(resume) {
      clearTimeout(this.timer);
      this.close();
      this.revoked = false;
      if (!this.all && this.models.size === 0 && windows.size === 0 && locations.size === 0 && views.size === 0) return setState('idle');
      if (!resume || !this.lastId) {
        this.lastId = '';
        this.generation += 1; // what the old stream queued is older than the new snapshots
        resyncing = null;
      }
      setState(this.attempt > 0 ? (this.attempt > config.offlineAfter ? 'offline' : 'reconnecting') : 'connecting');
      // A session cookie first, when the server offers sessions, so the stream needs no token.
      const opening = this.opening;
      ensureSession().then(
        (withCookie) => { if (opening === this.opening) this.connect(resume, withCookie); },
        (refusal) => {
          if (opening !== this.opening) return;
          if (refusal && refusal.status === 401) {
            this.refused(refusal.detail);
            return;
          }
          this.retry();
        });
    },

    /** The token was refused: wait for LiveBind.configure({token}) instead of retrying. */
    refused(detail) {
      this.close();
      this.revoked = true;
      setState('unauthorized');
      raise(null, null, null, 'the server refused the token: ' + (detail || '401'), { status: 401 });
    },

    /** The token expired or its session ended (`auth_revoked`): the page may answer with a new token. */
    revoke(reason) {
      this.close();
      session.token = null;
      this.revoked = true;
      setState('unauthorized');
      // The page answers with LiveBind.configure({token}), now or later; that reconnects.
      emit(document, 'livebind:auth-revoked', { reason, lastEventId: this.lastId });
    },

    /** Opens the stream itself, with the session cookie (`withCookie`) or the token in a header. */
    connect(resume, withCookie) {
      const stream = { controller: new AbortController(), lastByte: performance.now(), first: true, withCookie, held: [] };
      this.stream = stream;
      this.streamId = null;
      stats.streams += 1;
      const accept = { Accept: 'text/event-stream' };
      const init = { headers: withCookie ? accept : withToken(accept), cache: 'no-store', credentials: 'same-origin',
                     signal: stream.controller.signal };
      const url = this.url(resume);
      stream.subs = this.withSubs;
      stream.whole = this.whole;
      fetch(url, init)
        .then((response) => this.read(stream, response))
        .catch(() => {})
        .then(() => {
          if (stream !== this.stream) return; // closed or replaced on purpose
          this.close();
          this.retry();
        });
      // Nothing at all, not even a heartbeat, for two heartbeat intervals: the stream is dead.
      const limit = 2 * config.heartbeat;
      this.watchdog = setInterval(() => {
        if (stream !== this.stream || performance.now() - stream.lastByte <= limit) return;
        raise(null, null, null, `no data or heartbeat for ${limit} ms; reconnecting`);
        this.close();
        this.retry();
      }, Math.max(100, config.heartbeat / 4));
    },

    async read(stream, response) {
      if (stream !== this.stream) return;
      if (!response.ok && stream.subs && response.status === 400 && this.subs !== true) {
        this.subs = false; // a server without path subscriptions: stream the models whole
        this.open(false);
        return;
      }
      if (response.status === 401) {
        const problem = await response.json().catch(() => null);
        if (stream !== this.stream) return;
        if (stream.withCookie) {
          // The session ended (or the server restarted): make a new one from the token, once.
          session.token = null;
          if (!this.sessionRetried) {
            this.sessionRetried = true;
            this.open(true);
            return;
          }
        }
        this.refused(problem && problem.detail);
        return;
      }
      if (!response.ok || !response.body) {
        const problem = await response.json().catch(() => null);
        if (stream !== this.stream) return;
        // A window larger than this server's --max-window: ask again within it.
        if (learnWindowLimit(problem, Math.max(0, ...Array.from(windows.values(), (w) => w.want.limit)))) {
          this.open(false);
          return;
        }
        raise(null, null, null, `the event stream was refused (${response.status}): ${(problem && problem.detail) || response.statusText}`,
          { status: response.status });
        return;
      }
      this.attempt = 0;
      this.sessionRetried = false;
      stream.lastByte = performance.now();
      connection.node = response.headers.get('LiveBind-Node');
      setState('live');
      checkModels();
      await readEvents(response.body, {
        bytes: () => {
          if (stream !== this.stream) return false;
          stream.lastByte = performance.now();
          return true;
        },
        event: (type, text, id) => {
          if (stream !== this.stream) return;
          if (type === 'presence') {
            // The stream's own notice, after its snapshots: keys whose entries are gone; their
            // handles join again.
            let gone = [];
            try { gone = JSON.parse(text).gone || []; } catch (error) { /* not a notice */ }
            presenceGone(gone);
            return;
          }
          if (stream.subs && stream.first) {
            stream.first = false;
            // A server with path subscriptions starts such a stream with `stream`; one without
            // ignores ?sub= and sends snapshots: use whole models from now on.
            this.subs = type === 'stream';
            if (!this.subs) { this.open(false); return; }
          }
          if (id !== null && id !== '') this.lastId = id;
          if (type === 'auth_revoked') {
            let reason = 'expired';
            try { reason = JSON.parse(text).reason || reason; } catch (error) { /* keep the default */ }
            this.revoke(reason);
            return;
          }
          if (!EVENT_TYPES.has(type)) return;
          let data;
          try {
            data = JSON.parse(text);
          } catch (error) {
            raise(null, null, null, `malformed ${type} event ${id}: ${error.message}`);
            return;
          }
          // An id closes a group (a cut's snapshots, one commit's events): what comes without one waits
          // for it, so a stream dropped inside a group leaves none of it applied and the resume from the
          // last id sends it whole. A location's snapshot restates a point and applies at once.
          const closes = id !== null && id !== '';
          if (!closes && type !== 'stream' && !(type === 'snapshot' && data.path !== undefined)) {
            stream.held.push([type, data]);
            return;
          }
          if (closes) for (const [heldType, heldData] of stream.held.splice(0)) enqueue(heldType, heldData, id, false, stream.whole);
          enqueue(type, data, id || '', closes, stream.whole);
        },
        id: (id) => {
          // An id alone: a snapshot of no model (none of the stream's exists). It closes the group.
          if (stream !== this.stream || id === '') return;
          this.lastId = id;
          const held = stream.held.splice(0);
          held.forEach(([heldType, heldData], index) => enqueue(heldType, heldData, id, index === held.length - 1, stream.whole));
        },
        comment: () => {
          // A heartbeat after a lone `resync` (a server that sends no id for a snapshot of no
          // model): no id will close its group.
          if (stream !== this.stream || stream.held.length !== 1 || stream.held[0][0] !== 'resync') return;
          const [[type, data]] = stream.held.splice(0);
          enqueue(type, data, '', true, stream.whole);
        },
        chunk: () => { if (document.hidden) flushNow(); },
      });
    },

    /** Reconnects after a delay that grows and is jittered. */
    retry() {
      this.attempt += 1;
      const ceiling = Math.min(config.backoffMax, config.backoffBase * 2 ** (this.attempt - 1));
      const delay = ceiling / 2 + Math.random() * ceiling / 2;
      const offline = this.attempt > config.offlineAfter || global.navigator.onLine === false;
      setState(offline ? 'offline' : 'reconnecting');
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.open(true), delay);
    },

    revoked: false,
    /** Whether a stream refused with a session cookie was retried with a new session. */
    sessionRetried: false,
    /** Grows with every close, so that a session request of an earlier open is ignored. */
    opening: 0,

    close() {
      this.opening += 1;
      clearInterval(this.watchdog);
      this.watchdog = 0;
      if (this.stream) {
        const { controller } = this.stream;
        this.stream = null;
        controller.abort();
      }
    },
  };

  function setState(state) {
    if (connection.state === state) return;
    connection.state = state;
    document.documentElement.setAttribute('data-lb-state', state);
    emit(document, 'livebind:state', { state, node: connection.node });
  }

  /** After a stream opens, report bindings to models the server does not have. */
  async function checkModels() {
    if (modelUsers.size === 0) return;
    let names;
    try {
      names = new Set();
      // Pages of --max-list-bytes: each but the last names the next one's start.
      for (let after = null, pages = 0; pages < 1000; pages++) {
        const query = after === null ? '' : '?after=' + encodeURIComponent(after);
        const response = await fetch(config.server + '/models' + query, { headers: withToken({}) });
        const page = await response.json();
        for (const m of page.models) names.add(m.name);
        if (typeof page.next !== 'string') break;
        after = page.next;
      }
    } catch (e) {
      return;
    }
    for (const [model, users] of modelUsers) {
      // A presence room exists only while someone is in it: until then it is an empty room.
      if (names.has(model) || knownModels.has(model) || model.startsWith(ROOM_PREFIX)) {
        modelUsers.delete(model);
        continue;
      }
      for (const u of users) raise(u.el, u.attribute, u.path, `unknown model "${model}"`);
      modelUsers.delete(model);
    }
  }

  // A page kept in the back/forward cache would hold its stream (one of six connections per host)
  // while frozen: close it on the way out, resume from the last event id on the way back.
  global.addEventListener('pagehide', () => {
    clearTimeout(connection.timer);
    connection.close();
  });
  global.addEventListener('pageshow', (e) => {
    if (e.persisted) connection.open(true);
  });

  global.addEventListener('online', () => {
    if (connection.state === 'offline') connection.open(true);
  });

  // ===========================================================================================
  // Presence
  //   LiveBind.presence('lobby', {name: 'Ann'}) joins a room (POST /presence/lobby): an entry in
  //   the model presence-lobby, which the handle streams. The entry's key goes into the stream's
  //   URL (?presence=KEY), so the page's one stream holds the entry and every reconnect claims it
  //   again. The entry leaves with leave() (DELETE), with the page (DELETE on pagehide), or when the
  //   stream ends (the server's --heartbeat + --presence-grace). A key the server names gone (the
  //   stream's first event, `presence`) joins again with the latest meta: a new id and key behind
  //   the same handle. That notice, not `resync` (`restart`), is the signal: after a restart every
  //   key a stream presents from the old run is named, and a stream resuming from an old-run id gets
  //   `restart` even when its keys are from the new run (a handle that joined again a moment before).
  //   data-lb-presence="lobby" does this while its element is in the page. A handle's requests go
  //   out one after another, in the order they were made.
  // ===========================================================================================

  const ROOM_PREFIX = 'presence-';
  const ROOM_NAME = /^[A-Za-z0-9_-]{1,119}$/;
  const PRESENCE_META = 'data-lb-presence-meta';
  /** Most keys one stream presents (the server's limit), so most entries one page holds. */
  const MAX_PRESENCE_KEYS = 16;

  const presences = new Set();      // entries of the handles that have not left
  const presenceOf = new WeakMap(); // element with data-lb-presence → its handle

  function roomProblem(room) {
    return `"${room}" is not a room name (1 to 119 characters from A-Z a-z 0-9 _ -)`;
  }

  /** `meta` as the JSON text a join or update sends: {} when undefined; throws for what JSON cannot hold. */
  function metaText(meta) {
    const text = JSON.stringify(meta === undefined ? {} : meta);
    if (text === undefined) throw new TypeError('presence meta must be a JSON value');
    return text;
  }

  /**
   * One /presence request (body: JSON text or undefined) with the page's token, as writes send it.
   * Resolves with the parsed answer (null when empty); rejects with {status, detail}, status 0 when
   * the network failed.
   */
  async function presenceRequest(method, path, body, key, keepalive) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (key) headers['Presence-Key'] = key;
    let response;
    try {
      response = await fetch(config.server + path, { method, headers: withToken(headers), body, cache: 'no-store', keepalive: Boolean(keepalive) });
    } catch (e) {
      throw { status: 0, detail: 'network error: ' + e.message };
    }
    const text = await response.text().catch(() => '');
    let answer = null;
    try { answer = text ? JSON.parse(text) : null; } catch (e) { answer = null; }
    if (!response.ok) {
      throw { status: response.status, detail: (answer && (answer.detail || answer.title)) || response.statusText || 'refused' };
    }
    return answer;
  }

  /** Whether a refused request may pass later as it is: the server away, restarting or full (503). */
  function transient(failure) {
    return failure.status === 0 || failure.status === 429 || (failure.status >= 502 && failure.status <= 504);
  }

  /** Waits `ms` (or less: until the entry leaves). */
  function pause(entry, ms) {
    return new Promise((resolve) => {
      const done = () => { clearTimeout(timer); entry.wake = null; resolve(); };
      const timer = setTimeout(done, ms);
      entry.wake = done;
    });
  }

  /** Runs `task` after the entry's earlier requests. */
  function run(entry, task) {
    entry.chain = entry.chain.then(task, task);
    return entry.chain;
  }

  /** Joins `room`: the handle LiveBind.presence returns. `el`: the data-lb-presence element, or null. */
  function joinRoom(room, meta, el) {
    if (typeof room !== 'string' || !ROOM_NAME.test(room)) throw new Error(roomProblem(room));
    const text = metaText(meta);
    let settle;
    const ready = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    ready.catch(() => {}); // a page that never reads it hears of a refusal through livebind:error
    // meta: the latest meta (JSON text); sent: what the server has; failure: why the last join failed.
    const entry = {
      room, model: ROOM_PREFIX + room, el, settle, meta: text, sent: null, id: null, key: null,
      left: false, failure: null, release: null, wake: null, chain: null, leaving: null,
    };
    entry.handle = Object.freeze({
      room,
      model: entry.model,
      ready,
      /** The entry's id in the room's members; null while joining (again) and after leaving. */
      get id() { return entry.id; },
      /** A copy of the latest meta. */
      get meta() { return JSON.parse(entry.meta); },
      update: (value) => updatePresence(entry, value),
      leave: () => leavePresence(entry),
    });
    presences.add(entry);
    entry.chain = joinEntry(entry, 'join', null);
    return entry.handle;
  }

  /**
   * POSTs the join with the latest meta, trying again with a growing delay while the server is away,
   * then streams the room and presents the key. Never rejects: a refusal rejects `ready` (of a first
   * join) and raises livebind:error.
   */
  async function joinEntry(entry, reason, previous) {
    for (let attempt = 0; !entry.left; attempt++) {
      const meta = entry.meta;
      let answer;
      try {
        if (connection.keys.size >= MAX_PRESENCE_KEYS) {
          throw { status: 0, final: true, detail: `a page holds at most ${MAX_PRESENCE_KEYS} presence entries (its stream presents at most ${MAX_PRESENCE_KEYS} keys)` };
        }
        answer = await presenceRequest('POST', '/presence/' + entry.room, meta);
      } catch (failure) {
        if (!failure.final && transient(failure)) {
          const ceiling = Math.min(config.backoffMax, config.backoffBase * 2 ** attempt);
          await pause(entry, ceiling / 2 + Math.random() * ceiling / 2);
          continue;
        }
        entry.failure = { status: failure.status, detail: failure.detail };
        presences.delete(entry); // it holds nothing now: presence() again to try again
        entry.settle.reject(entry.failure);
        presenceProblem(entry, `could not join room "${entry.room}": ${failure.detail}`, failure.status);
        return;
      }
      Object.assign(entry, { id: answer.id, key: answer.key, sent: meta, failure: null });
      if (entry.left) return; // leave() is next in line: it DELETEs the entry
      if (!entry.release) entry.release = useModel(entry.model, null, null, entry.model);
      connection.present(entry.key);
      entry.settle.resolve(entry.handle);
      announce(entry, previous, reason);
      if (entry.meta !== meta) {
        await sendMeta(entry).catch((failure) =>
          presenceProblem(entry, `could not update the entry in room "${entry.room}": ${failure.detail}`, failure.status));
      }
      return;
    }
  }

  /** Forgets the entry's key (the server no longer has it); returns the id it had. */
  function dropKey(entry) {
    const previous = entry.id;
    if (entry.key) connection.unpresent(entry.key, false);
    entry.key = null;
    entry.id = null;
    return previous;
  }

  /**
   * PATCHes the latest meta until the server has it; a lost answer is sent again (a PATCH repeats
   * safely). 403: the entry is gone (a restart the stream has not heard of yet), so it joins again.
   */
  async function sendMeta(entry) {
    for (let attempt = 0; entry.key && !entry.left && entry.sent !== entry.meta;) {
      const { meta, key } = entry;
      try {
        await presenceRequest('PATCH', `/presence/${entry.room}/${encodeURIComponent(entry.id)}`, meta, key);
        if (entry.key === key) entry.sent = meta;
      } catch (failure) {
        if (entry.key !== key) continue; // named gone meanwhile: the join queued after this sends the latest meta
        if (failure.status === 403) return joinEntry(entry, 'gone', dropKey(entry));
        if (!transient(failure) || attempt >= config.writeRetries) throw failure;
        await pause(entry, 250 * 2 ** attempt++);
      }
    }
  }

  function updatePresence(entry, meta) {
    if (entry.left) return Promise.reject({ status: 0, detail: `left room "${entry.room}"` });
    entry.meta = metaText(meta);
    return run(entry, () => {
      if (!entry.key && entry.failure) throw entry.failure;
      return sendMeta(entry);
    });
  }

  function leavePresence(entry) {
    if (entry.leaving) return entry.leaving;
    entry.left = true;
    presences.delete(entry);
    if (entry.wake) entry.wake();
    entry.settle.reject({ status: 0, detail: `left room "${entry.room}" before joining it` });
    entry.leaving = run(entry, async () => {
      if (entry.release) { entry.release(); entry.release = null; }
      const { key, id } = entry;
      if (!key) return;
      entry.key = null;
      entry.id = null;
      let gone = false;
      try {
        await presenceRequest('DELETE', `/presence/${entry.room}/${encodeURIComponent(id)}`, undefined, key);
        gone = true;
      } catch (failure) {
        gone = failure.status === 403; // gone already
        if (!gone) presenceProblem(entry, `could not leave room "${entry.room}" (it leaves once the stream lets go of it): ${failure.detail}`, failure.status);
      }
      // Still there (the DELETE was lost): a stream without the key ends the claim now.
      connection.unpresent(key, !gone);
      announce(entry, id, 'leave');
    });
    return entry.leaving;
  }

  /** The server named these keys gone (`event: presence`): their handles join again. */
  function presenceGone(keys) {
    for (const entry of Array.from(presences)) {
      if (!entry.key || !keys.includes(entry.key)) continue;
      const previous = dropKey(entry);
      run(entry, () => joinEntry(entry, 'gone', previous));
    }
    for (const key of keys) connection.unpresent(key, false);
  }

  /** `livebind:presence` {room, id, previous, reason} on the element (or document): the entry's id changed. */
  function announce(entry, previous, reason) {
    const { el } = entry;
    if (el && presenceOf.get(el) === entry.handle) {
      if (entry.id) el.setAttribute('data-lb-presence-id', entry.id);
      else el.removeAttribute('data-lb-presence-id');
    }
    emit(el && el.isConnected ? el : document, 'livebind:presence', { room: entry.room, id: entry.id, previous, reason });
  }

  function presenceProblem(entry, reason, status) {
    raise(entry.el, entry.el ? 'data-lb-presence' : null, entry.room, reason, { status, room: entry.room });
  }

  // ---- data-lb-presence="room": in the room while the element is in the page -----------------

  function bindPresence(el, text) {
    const room = text.trim();
    if (!ROOM_NAME.test(room)) {
      raise(el, 'data-lb-presence', text, roomProblem(room));
      return null;
    }
    const meta = presenceMeta(el);
    if (meta === undefined) return null;
    const handle = joinRoom(room, meta, el);
    presenceOf.set(el, handle);
    return () => {
      if (presenceOf.get(el) === handle) presenceOf.delete(el);
      el.removeAttribute('data-lb-presence-id');
      handle.leave();
    };
  }

  /** The element's data-lb-presence-meta as a value ({} without one); undefined (and livebind:error) when it is not JSON. */
  function presenceMeta(el) {
    const text = el.getAttribute(PRESENCE_META);
    if (text === null || text.trim() === '') return {};
    try {
      return JSON.parse(text);
    } catch (e) {
      raise(el, PRESENCE_META, text, 'not JSON: ' + e.message);
      return undefined;
    }
  }

  /** A changed data-lb-presence-meta updates the entry in place (same id); one that was not JSON joins now. */
  function presenceMetaChanged(el) {
    const handle = presenceOf.get(el);
    if (!handle) {
      if (scanned.has(el) && el.hasAttribute('data-lb-presence')) {
        unbindTree(el);
        walk(el, scopeFor(el));
      }
      return;
    }
    const meta = presenceMeta(el);
    if (meta === undefined) return;
    handle.update(meta).catch((failure) =>
      raise(el, PRESENCE_META, el.getAttribute(PRESENCE_META), `could not update the entry in room "${handle.room}": ${failure.detail}`,
        { status: failure.status, room: handle.room }));
  }

  // A page that goes away leaves at once (the stream's end would take --heartbeat + --presence-grace);
  // one kept in the back/forward cache finds its keys gone when it comes back, and joins again.
  global.addEventListener('pagehide', () => {
    for (const entry of presences) {
      if (!entry.key) continue;
      presenceRequest('DELETE', `/presence/${entry.room}/${encodeURIComponent(entry.id)}`, undefined, entry.key, true).catch(() => {});
    }
  });

  // ===========================================================================================
  // Public API
  // ===========================================================================================

  const anyListeners = new Set();

  function absolute(path) {
    const parsed = parsePath(path);
    if (parsed.relative) throw new Error('LiveBind API paths start with a model name');
    return parsed;
  }

  const LiveBind = {
    /** A copy of the current value at a dotted path ("sensor.temperature"), or undefined. */
    get(path) {
      const { model, tokens } = absolute(path);
      const value = modelScope(model).get(tokens);
      return value === undefined ? undefined : structuredClone(value);
    },

    /** Writes a value (PUT). Resolves with the server's {id, rev}; rejects with {status, detail}. */
    set(path, value) {
      const { model, tokens } = absolute(path);
      return write(model, tokens, value);
    },

    /**
     * Calls fn(value, change) whenever the value at `path` changes (and once now if loaded); "*"
     * means every change of every model. `value` is live: read it, do not modify it. Returns the
     * unsubscribe function.
     */
    on(path, fn) {
      if (path === '*') {
        anyListeners.add(fn);
        const release = connection.wantAll();
        return () => { anyListeners.delete(fn); release(); };
      }
      const { model, tokens } = absolute(path);
      const scope = modelScope(model);
      const release = usePath(model, tokens, null, null, path);
      return watch(scope, tokens, { update: (change) => fn(scope.get(tokens), change) }, release);
    },

    /**
     * Streams only the location at `path` ("sensor/readings" or "sensor.readings") with `?sub=`,
     * until the returned function is called (safe to call twice). Bindings and `on` listeners at or
     * below it, made while it is held, use it instead of the whole model; changes elsewhere in the
     * model never reach the page. A path naming a whole model streams the model.
     */
    subscribe(path) {
      const { model, tokens } = absolute(path);
      return tokens.length ? useLocation(model, tokens) : useModel(model, null, null, path);
    },

    /**
     * Joins presence room `room` (POST /presence/{room}) with `meta` (any JSON value; {}) and keeps
     * the page in it until leave(): the page's stream holds the entry, and an entry the server lost
     * (a restart) is joined again with the latest meta, under a new id. Returns at once a handle
     * {room, model, id, meta, ready, update(meta), leave()}: `ready` resolves with the handle once
     * joined, or rejects with {status, detail}; update resolves once the server has the meta; leave
     * resolves once the entry is gone. The room's members are the model `presence-{room}`.
     * Throws for a bad room name.
     */
    presence(room, meta) {
      return joinRoom(room, meta, null);
    },

    /**
     * The live value at a JSON Pointer in a model, without a copy (for renderers such as the
     * dashboard): read it, never modify it.
     */
    peek(model, pointer) {
      return modelScope(model).get(pointerTokens(pointer || ''));
    },

    /** Names of the models currently streamed. */
    models() {
      return Array.from(models.keys()).sort();
    },

    /**
     * What the page asks the server to stream (for tests and tools): {models: [names] or "*", cached,
     * watchNodes, waitingUsers, windows, locations, views, pathSubscriptions, presence: [{room, id}]}.
     */
    subscriptions() {
      let watchNodes = 0;
      for (const scope of modelScopes.values()) watchNodes += countNodes(scope.trie);
      return {
        models: connection.all ? '*' : Array.from(connection.models).sort(),
        cached: Array.from(models.keys()).sort(),
        watchNodes,
        waitingUsers: Array.from(modelUsers.values()).reduce((n, users) => n + users.size, 0),
        windows: Array.from(windows.values()).map((w) => ({
          path: w.model + w.pointer, mode: w.mode, offset: w.offset, rows: w.rows.length,
          length: w.mode === 'window' ? w.length : (modelScope(w.model).get(w.tokens) || EMPTY).length,
        })),
        locations: Array.from(locations.values()).map((l) => ({ path: l.model + l.pointer, mode: l.mode, uses: l.uses })),
        views: Array.from(views.values()).map((v) => ({
          path: v.model + v.pointer, view: v.text, mode: v.mode, offset: v.offset, rows: v.rows.length, length: v.length, uses: v.uses,
        })),
        pathSubscriptions: connection.subs,
        presence: Array.from(presences, (p) => ({ room: p.room, id: p.id })),
      };
    },

    /** Binds a subtree now (it is also picked up automatically when added to the page). */
    scan(root) {
      walk(root || document.documentElement, null);
    },

    /** The connection state: connecting, live, reconnecting, offline, or unauthorized (waiting for a token). */
    get state() {
      return connection.state;
    },

    /** The cluster node serving the event stream (its `LiveBind-Node` header); null on a single server. */
    get node() {
      return connection.node;
    },

    /** The id of the last event received. */
    get lastEventId() {
      return connection.lastId;
    },

    /**
     * Sets options: {token} (a bearer token for writes and reads), {server}, {debounce},
     * {heartbeat} (ms, the server's --heartbeat), {maxQueue}. A new token reconnects the stream; so
     * does any {token} after `livebind:auth-revoked` (the same one, too, when it is still valid and
     * only its session ended).
     */
    configure(options) {
      const before = currentToken();
      for (const key of ['token', 'server', 'debounce', 'heartbeat', 'maxQueue', 'narrowDelay', 'rowRetries', 'writeRetries', 'virtualAfter']) {
        if (options && Object.prototype.hasOwnProperty.call(options, key)) config[key] = options[key];
      }
      if (options && Object.prototype.hasOwnProperty.call(options, 'server')) session.offered = null;
      const renewed = connection.revoked && options && Object.prototype.hasOwnProperty.call(options, 'token');
      if (currentToken() !== before) {
        // No token any more: sign out, so that the session cookie stops authorizing this browser.
        if (!currentToken() && session.token) fetch(config.server + '/session', { method: 'DELETE' }).catch(() => {});
        session.token = null;
      }
      if (renewed || (currentToken() !== before && (connection.stream || connection.timer))) connection.open(true);
      return LiveBind;
    },

    /** fetch() against the LiveBind server (`path` such as "/bindings"), with the token if there is one. */
    fetch(path, init) {
      const options = Object.assign({}, init);
      options.headers = withToken(options.headers);
      return fetch(config.server + path, options);
    },

    /** Counters for tests and benchmarks: events and changes applied, frames used, time spent applying (ms). */
    stats,
    config,

    /**
     * Internal, not API (it may change with livebind.js): the JSON Pointer helpers, for the
     * dashboard (dashboard.js), so that both read and write pointers alike. tokens(pointer) →
     * tokens; pointer(tokens) → pointer; escape(token) → the token as a pointer writes it;
     * isPrefix(prefix, tokens) → whether `prefix` is `tokens` or a path above it.
     */
    _pointer: Object.freeze({ tokens: pointerTokens, pointer: tokensPointer, escape: escapeToken, isPrefix }),
  };

  global.LiveBind = LiveBind;

  // ===========================================================================================
  // Boot
  // ===========================================================================================

  function start() {
    walk(document.documentElement, null);
    if (!connection.all && connection.models.size === 0) setState('idle'); // nothing to stream (yet)
    observer.observe(document.documentElement, {
      childList: true, subtree: true, attributes: true, attributeFilter: ATTRS.concat(MODIFIERS, [PRESENCE_META]),
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})(window);
