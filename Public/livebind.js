/*
 * livebind.js: declarative live bindings to LiveBind models over Server-Sent Events.
 *
 * One readable file, no build step, no dependencies. Include it with
 *   <script src="/livebind.js" defer></script>
 * and declare bindings with data-lb-* attributes (see docs/Browser.md).
 *
 * Sections, top to bottom:
 *   Configuration · Access token · Paths · Watch tree · Model cache · Scopes · Events and errors ·
 *   Writes · Directives · Walker · Frame scheduling · Connection · Public API · Boot
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
    /** Whether reads need the token too (--private): null until learned from a refused stream. */
    privateReads: null,
  };

  // ===========================================================================================
  // Access token
  //   A server started with --token or --jwt-key needs `Authorization: Bearer <token>` on writes
  //   (and, with --private, on reads). The token comes from LiveBind.configure({token}), else
  //   <meta name="livebind-token" content="…">, else sessionStorage "livebind-token" (where the
  //   dashboard keeps a token it was opened with as /#token=…). EventSource cannot send headers:
  //   when the server offers sessions (GET /healthz says "sessions": true) and is this page's own
  //   origin, the token is traded for an HttpOnly session cookie (POST /session) before the stream
  //   opens, so no token goes in its URL; otherwise the stream carries it as ?access_token=, only
  //   once the server has refused a stream without it. A stream whose token expired (or whose
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

  const ATTRS = ['data-lb-each', 'data-lb-text', 'data-lb-value', 'data-lb-attr', 'data-lb-class', 'data-lb-show'];
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

  /** Tokens → JSON Pointer. */
  function tokensPointer(tokens) {
    return tokens.map((t) => '/' + String(t).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
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

  function addWatcher(root, tokens, watcher) {
    let node = root;
    for (const t of tokens) {
      if (!node.children) node.children = new Map();
      let next = node.children.get(t);
      if (!next) node.children.set(t, (next = makeNode()));
      node = next;
    }
    if (!node.watchers) node.watchers = new Set();
    node.watchers.add(watcher);
    return () => node.watchers.delete(watcher);
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
    const entry = models.get(change.model);
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
      return { scope: ctx, tokens: parsed.tokens };
    }
    useModel(parsed.model, el, attribute, text);
    return { scope: modelScope(parsed.model), tokens: parsed.tokens };
  }

  /** Watches `tokens` in `scope`; calls update now when data is there. Returns the unwatch function. */
  function watch(scope, tokens, watcher) {
    const unwatch = addWatcher(scope.trie, tokens, watcher);
    if (scope.loaded()) watcher.update(null);
    return unwatch;
  }

  // ===========================================================================================
  // Events and errors
  //   Everything the page may want to react to is a DOM event with a `detail`:
  //   livebind:state {state}, livebind:change {model, path, kind, …}, livebind:error
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
    const path = tokens.map((t) => encodeURIComponent(String(t).replace(/~/g, '~0').replace(/\//g, '~1')));
    return config.server + '/models/' + encodeURIComponent(model) + (path.length ? '/' + path.join('/') : '');
  }

  /** Sends one write after any earlier write to the same place. Resolves with {id, rev}; rejects with {status, detail}. */
  function write(model, tokens, value) {
    const url = writeURL(model, tokens);
    const previous = writeChains.get(url) || Promise.resolve();
    const next = previous.catch(() => {}).then(() => send(url, value));
    writeChains.set(url, next);
    const forget = () => { if (writeChains.get(url) === next) writeChains.delete(url); };
    next.then(forget, forget);
    return next;
  }

  async function send(url, value) {
    let response;
    try {
      response = await fetch(url, {
        method: 'PUT',
        headers: withToken({ 'Content-Type': 'application/json' }),
        body: JSON.stringify(value),
      });
    } catch (e) {
      throw { status: 0, detail: 'network error: ' + e.message };
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
    });
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
      return bindValue(el, 'data-lb-text', path, ctx, (v) => {
        const text = toText(v);
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
      combine(parsePairs(el, 'data-lb-attr', text).map(([name, path]) => {
        const refusal = refusedName(el, name);
        if (refusal) {
          raise(el, 'data-lb-attr', path, `binding "${name}" is not allowed: ${refusal}`, { name });
          return null;
        }
        return bindValue(el, 'data-lb-attr', path, ctx, (v) => {
          if (v === undefined || v === null || v === false) return el.removeAttribute(name);
          const text = v === true ? '' : toText(v);
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
      const model = scope.model;
      const tokens = scope.pointer(r.tokens);
      write(model, tokens, value).then(
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
    const unwatch = watch(r.scope, r.tokens, { update });
    return () => {
      clearTimeout(state.timer);
      el.removeEventListener('input', onInput);
      el.removeEventListener('change', onChange);
      el.removeEventListener('blur', onBlur);
      unwatch();
    };
  }

  // ---- data-lb-each: one template copy per array element -------------------------------------

  function bindEach(el, path, ctx) {
    const r = resolve(el, 'data-lb-each', path, ctx);
    if (!r) return null;
    const template = Array.from(el.children).find((c) => c.tagName === 'TEMPLATE');
    if (!template || template.content.childElementCount !== 1) {
      raise(el, 'data-lb-each', path, 'data-lb-each needs one <template> child holding exactly one element');
      return null;
    }
    const proto = template.content.firstElementChild;
    const anchor = document.createComment(' data-lb-each ' + path + ' ');
    template.after(anchor);
    const rows = [];

    const list = () => {
      const v = r.scope.get(r.tokens);
      return Array.isArray(v) ? v : EMPTY;
    };

    function makeRow(index) {
      const row = { index, key: keyOf(list()[index]), trie: makeNode(), el: proto.cloneNode(true) };
      row.scope = {
        model: r.scope.model,
        trie: row.trie,
        loaded: () => true,
        get: (tokens) => lookup(list()[row.index], tokens),
        pointer: (tokens) => r.scope.pointer(r.tokens).concat(String(row.index), tokens),
      };
      rowScopes.set(row.el, row.scope);
      walk(row.el, row.scope);
      return row;
    }

    function dropRow(row) {
      row.el.remove();
      unbindTree(row.el);
    }

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

    const watcher = {
      update: (change) => reconcile(change),
      handle(tokens, depth, change) {
        if (depth === tokens.length) {
          if (change.index === undefined && change.kind !== 'move') return reconcile(change);
          switch (change.kind) {
            case 'insert': return insertAt(change.index);
            case 'remove': return removeAt(change.index);
            case 'replace': case 'set': return replaceAt(change.index, change);
            case 'move': return moveRow(change.from, change.to);
            default: return reconcile(change);
          }
        }
        if (depth === tokens.length - 1 && (change.kind === 'remove' || tokens[depth] === '-')) {
          return change.kind === 'remove' ? removeAt(+tokens[depth]) : reconcile(change);
        }
        const row = rows[+tokens[depth]];
        if (!row || String(row.index) !== tokens[depth]) return;
        notify(row.trie, tokens, depth + 1, change);
        row.key = keyOf(list()[row.index]);
      },
    };
    const unwatch = watch(r.scope, r.tokens, watcher);
    return () => {
      unwatch();
      for (const row of rows) dropRow(row);
      rows.length = 0;
      anchor.remove();
    };
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
  //   only writes to the DOM; nothing here reads layout.
  // ===========================================================================================

  const queue = [];
  let frame = 0;
  const stats = { events: 0, changes: 0, frames: 0, applyMs: 0, longestApplyMs: 0 };

  function enqueue(type, data, id) {
    queue.push({ type, data, id });
    if (frame) return;
    // Background tabs get no animation frames; a timer keeps them current.
    frame = document.hidden ? setTimeout(flushQueue, 50) : requestAnimationFrame(flushQueue);
  }

  let appliedId = 0; // the id of the last event applied to the local copy

  /** Whether the event with this id (a write's answer) has reached the local copy. */
  function applied(id) {
    return Number(appliedId) >= Number(id);
  }

  function flushQueue() {
    frame = 0;
    const started = performance.now();
    const events = queue.splice(0, queue.length);
    stats.frames += 1;
    for (const event of events) {
      try {
        applyEvent(event);
      } catch (e) {
        raise(null, null, null, `could not apply ${event.type} event ${event.id}: ${e.message}`);
      }
      stats.events += 1;
      if (event.id) appliedId = event.id;
    }
    const spent = performance.now() - started;
    stats.applyMs += spent;
    if (spent > stats.longestApplyMs) stats.longestApplyMs = spent;
  }

  function applyEvent({ type, data, id }) {
    switch (type) {
      case 'snapshot': {
        models.set(data.model, { value: data.value, rev: data.rev });
        knownModels.add(data.model);
        deliver({ model: data.model, path: '', tokens: [], kind: 'snapshot', value: data.value, rev: data.rev, id });
        return;
      }
      case 'drop': {
        models.delete(data.model);
        knownModels.delete(data.model);
        deliver({ model: data.model, path: '', tokens: [], kind: 'drop', rev: data.rev, id });
        return;
      }
      case 'resync':
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
  // Connection
  //   One EventSource for every model the page uses. New models → a fresh stream (with
  //   snapshots). A dropped stream → reconnect after a backoff with jitter, resuming from the
  //   last event id (?lastEventId=); the server answers with what was missed or a resync.
  // ===========================================================================================

  const EVENT_TYPES = ['snapshot', 'set', 'insert', 'remove', 'replace', 'move', 'batch', 'drop', 'resync'];
  const knownModels = new Set();
  const modelUsers = new Map(); // model → [{el, attribute, path}] until the model is seen

  function useModel(name, el, attribute, path) {
    if (!knownModels.has(name)) {
      const users = modelUsers.get(name) || [];
      users.push({ el, attribute, path });
      modelUsers.set(name, users);
    }
    connection.want(name);
  }

  const connection = {
    source: null,
    all: false,
    models: new Set(),
    lastId: '',
    attempt: 0,
    timer: 0,
    pending: 0,
    state: '',

    want(name) {
      if (this.all || this.models.has(name)) return;
      this.models.add(name);
      this.schedule();
    },

    wantAll() {
      if (this.all) return;
      this.all = true;
      this.schedule();
    },

    /** Opens a fresh stream soon, once for a burst of new models. */
    schedule() {
      if (this.pending) return;
      this.pending = setTimeout(() => { this.pending = 0; this.open(false); }, 0);
    },

    restart() {
      this.open(false);
    },

    url(resume, withCookie) {
      const params = new URLSearchParams();
      if (!this.all) for (const m of this.models) params.append('model', m);
      if (resume && this.lastId) params.set('lastEventId', this.lastId);
      const token = currentToken();
      if (token && config.privateReads && !withCookie) params.set('access_token', token);
      const query = params.toString();
      return config.server + '/events' + (query ? '?' + query : '');
    },

    /** Opens the stream, first making a session for the token when the server offers them. */
    open(resume) {
      clearTimeout(this.timer);
      this.close();
      this.revoked = false;
      if (!this.all && this.models.size === 0) return;
      if (!resume) this.lastId = '';
      setState(this.attempt > 0 ? (this.attempt > config.offlineAfter ? 'offline' : 'reconnecting') : 'connecting');
      const generation = ++this.generation;
      ensureSession().then(
        (withCookie) => { if (generation === this.generation) this.connect(resume, withCookie); },
        (refusal) => {
          if (generation !== this.generation) return;
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

    connect(resume, withCookie) {
      const source = new EventSource(this.url(resume, withCookie));
      this.source = source;
      let opened = false;
      const onEvent = (e) => {
        if (source !== this.source) return;
        if (e.lastEventId) this.lastId = e.lastEventId;
        let data;
        try {
          data = JSON.parse(e.data);
        } catch (error) {
          raise(null, null, null, `malformed ${e.type} event ${e.lastEventId}: ${error.message}`);
          return;
        }
        enqueue(e.type, data, e.lastEventId);
      };
      for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
      source.addEventListener('auth_revoked', (e) => {
        if (source !== this.source) return;
        let reason = 'expired';
        try { reason = JSON.parse(e.data).reason || reason; } catch (error) { /* keep the default */ }
        this.close();
        session.token = null;
        this.revoked = true;
        setState('unauthorized');
        // The page answers with LiveBind.configure({token}), now or later; that reconnects.
        emit(document, 'livebind:auth-revoked', { reason, lastEventId: this.lastId });
      });
      source.onopen = () => {
        if (source !== this.source) return;
        opened = true;
        this.attempt = 0;
        setState('live');
        checkModels();
      };
      source.onerror = () => {
        if (source !== this.source) return;
        this.close();
        if (!opened && withCookie) session.token = null; // the session may have ended: make a new one
        if (!opened && !withCookie && config.privateReads === null && currentToken()) {
          // Refused before it opened: if the server wants a token for reads, send it on the stream.
          readsArePrivate().then((isPrivate) => {
            if (source !== this.source && this.source !== null) return;
            if (isPrivate !== null) config.privateReads = isPrivate;
            if (isPrivate) this.open(true); else this.retry();
          });
          return;
        }
        this.retry();
      };
    },

    /** Our own reconnect, so the delay grows and is jittered (EventSource's built-in one is fixed). */
    retry() {
      this.attempt += 1;
      const ceiling = Math.min(config.backoffMax, config.backoffBase * 2 ** (this.attempt - 1));
      const delay = ceiling / 2 + Math.random() * ceiling / 2;
      const offline = this.attempt > config.offlineAfter || global.navigator.onLine === false;
      setState(offline ? 'offline' : 'reconnecting');
      this.timer = setTimeout(() => this.open(true), delay);
    },

    generation: 0,
    revoked: false,

    close() {
      if (this.source) {
        this.source.close();
        this.source = null;
      }
    },
  };

  /** Whether reads need a token (a tokenless HEAD /models answers 401 then); null when unreachable. */
  async function readsArePrivate() {
    try {
      const response = await fetch(config.server + '/models', { method: 'HEAD', cache: 'no-store' });
      return response.status === 401;
    } catch (e) {
      return null;
    }
  }

  function setState(state) {
    if (connection.state === state) return;
    connection.state = state;
    document.documentElement.setAttribute('data-lb-state', state);
    emit(document, 'livebind:state', { state });
  }

  /** After a stream opens, report bindings to models the server does not have. */
  async function checkModels() {
    if (modelUsers.size === 0) return;
    let names;
    try {
      const response = await fetch(config.server + '/models', { headers: withToken({}) });
      names = new Set((await response.json()).models.map((m) => m.name));
    } catch (e) {
      return;
    }
    for (const [model, users] of modelUsers) {
      if (names.has(model) || knownModels.has(model)) {
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
        connection.wantAll();
        return () => anyListeners.delete(fn);
      }
      const { model, tokens } = absolute(path);
      const scope = modelScope(model);
      connection.want(model);
      return watch(scope, tokens, { update: (change) => fn(scope.get(tokens), change) });
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

    /** Binds a subtree now (it is also picked up automatically when added to the page). */
    scan(root) {
      walk(root || document.documentElement, null);
    },

    /** The connection state: connecting, live, reconnecting, offline, or unauthorized (waiting for a token). */
    get state() {
      return connection.state;
    },

    /** The id of the last event received. */
    get lastEventId() {
      return connection.lastId;
    },

    /**
     * Sets options: {token} (a bearer token for writes, and for reads on a --private server),
     * {privateReads: true} to send the token on the stream from the start, {server}, {debounce}.
     * A new token reconnects the stream; so does any {token} after `livebind:auth-revoked` (the
     * same one, too, when it is still valid and only its session ended).
     */
    configure(options) {
      const before = currentToken();
      for (const key of ['token', 'privateReads', 'server', 'debounce']) {
        if (options && Object.prototype.hasOwnProperty.call(options, key)) config[key] = options[key];
      }
      if (options && Object.prototype.hasOwnProperty.call(options, 'server')) session.offered = null;
      const renewed = connection.revoked && options && Object.prototype.hasOwnProperty.call(options, 'token');
      if (currentToken() !== before) {
        // No token any more: sign out, so that the session cookie stops authorizing this browser.
        if (!currentToken() && session.token) fetch(config.server + '/session', { method: 'DELETE' }).catch(() => {});
        session.token = null;
      }
      if (renewed || (currentToken() !== before && (connection.source || connection.timer))) connection.open(true);
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
  };

  global.LiveBind = LiveBind;

  // ===========================================================================================
  // Boot
  // ===========================================================================================

  function start() {
    walk(document.documentElement, null);
    observer.observe(document.documentElement, { childList: true, subtree: true, attributes: true, attributeFilter: ATTRS });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})(window);
