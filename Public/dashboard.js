/*
 * The LiveBind dashboard: the server's models in a list with a filter; the ones opened are live,
 * built on livebind.js. Only open models are streamed (livebind.js subscribes to the models it is
 * asked for), so ten thousand models cost a list of names, not ten thousand live cards. A card can
 * also show one location of a model (typed in the filter as model/pointer, "open here" on a key,
 * or linked as /#open=model/pointer): it subscribes to that location only (LiveBind.subscribe,
 * ?sub=), and a very long array there is read through a server window.
 *
 * livebind.js does the live work: leaf values are <input data-lb-value> (two-way, focus-safe),
 * tables are <tbody data-lb-each> (row by row). This file draws the structure, redraws a part only
 * when its shape changes, highlights what changed, draws charts, the bindings panel and the log.
 * A field's "history" opens its history chart (livebind.js's data-lb-chart) and its audit trail.
 *
 * Sections: Access token · Helpers · Rendering values · Charts · History · Applying changes ·
 * Model list · Locations · Event log · Bindings · Start
 */
(function () {
  'use strict';

  const LB = window.LiveBind;
  const $ = (selector) => document.querySelector(selector);
  const LOG_LIMIT = 100;
  const SVG = 'http://www.w3.org/2000/svg';
  const WIDE = new Set(['table', 'series']); // drawn below their key, full width
  const AUTO_OPEN = 12;      // a server with at most this many models has them all open
  const LIST_LIMIT = 100;    // names shown at once in the model list (the filter narrows it)
  const VIRTUAL_ROWS = 200;  // tables and lists longer than this render only the rows in view
  const CHART_POINTS = 1000; // charts draw the last this many values
  const WINDOW_ROWS = 10000; // an array opened at its location with more rows is read through a server window
  const WINDOW_SIZE = 300;   // rows in that window (data-lb-window)

  // ===========================================================================================
  // Access token
  //   Open the dashboard as /#token=… on a server started with --token: the fragment never
  //   reaches the server (nor its logs). The token moves to this tab's sessionStorage, where
  //   livebind.js finds it (and trades it for a session cookie, so the event stream carries no
  //   token), and the fragment is removed from the address bar. When the token expires the
  //   stream stops and a hint asks for a new one: typing /#token=NEW after the address resumes.
  // ===========================================================================================

  function takeTokenFromFragment() {
    const match = /^#(?:.*&)?token=([^&]*)/.exec(window.location.hash);
    if (!match) return;
    const token = decodeURIComponent(match[1]);
    const rest = new URLSearchParams(window.location.hash.slice(1)); // the rest (#open=…) stays
    rest.delete('token');
    try {
      if (token) sessionStorage.setItem('livebind-token', token);
      else sessionStorage.removeItem('livebind-token'); // /#token= forgets it (and signs out below)
    } catch (e) {
      // storage disabled: the token lives as long as the page
    }
    if (!token) LB.fetch('/session', { method: 'DELETE' }).catch(() => {});
    LB.configure({ token: token || null });
    const kept = rest.toString();
    window.history.replaceState(null, '', window.location.pathname + window.location.search + (kept ? '#' + kept : ''));
  }

  takeTokenFromFragment();
  window.addEventListener('hashchange', takeTokenFromFragment);

  // ===========================================================================================
  // Helpers
  // ===========================================================================================

  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'class') el.className = value;
      else if (name === 'text') el.textContent = value;
      else el.setAttribute(name, value === true ? '' : value);
    }
    for (const child of children) if (child !== null && child !== undefined) el.append(child);
    return el;
  }

  // JSON Pointers are read and written with livebind.js's own helpers (internal to the two files).
  const { escape: escapeToken, pointer: pointerOf, tokens: tokensOf, isPrefix } = LB._pointer;

  /** The livebind.js attribute path of a place in a model (pointer form, safe for any key). */
  function bindingPath(model, tokens) {
    return tokens.length ? model + pointerOf(tokens) : model;
  }

  /**
   * What a card shows: "model" (the whole model) or "model/pointer" (a location, JSON Pointer form
   * as in livebind.js attributes). Returns {key, model, tokens}, or null when it names no model.
   */
  function parseTarget(text) {
    const source = String(text || '').trim();
    const slash = source.indexOf('/');
    const model = slash < 0 ? source : source.slice(0, slash);
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(model)) return null;
    const tokens = slash < 0 ? [] : tokensOf(source.slice(slash));
    return { key: bindingPath(model, tokens), model, tokens };
  }

  function isPlainObject(v) {
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  }

  /** How a value is drawn: object, table, series, list, or a leaf kind. */
  function kindOf(value) {
    if (Array.isArray(value)) {
      if (value.length > 0 && value.every(isPlainObject)) return 'table';
      if (value.length > 0 && value.every((v) => typeof v === 'number')) return 'series';
      return 'list';
    }
    if (isPlainObject(value)) return 'object';
    if (value === null || value === undefined) return 'null';
    return typeof value; // string, number, boolean
  }

  function columnsOf(rows) {
    const columns = [];
    const seen = new Set();
    for (const row of rows) {
      for (const key of Object.keys(row)) if (!seen.has(key)) { seen.add(key); columns.push(key); }
      if (columns.length >= 12) break;
    }
    return columns;
  }

  function preview(value, limit) {
    const text = value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
    return text.length > limit ? text.slice(0, limit - 1) + '…' : text;
  }

  const flashColor = getComputedStyle(document.documentElement).getPropertyValue('--flash').trim() || 'rgba(255, 196, 0, 0.45)';

  /** A brief highlight; the Web Animations API needs no layout read to restart it. */
  function flash(el) {
    if (el && el.animate) el.animate([{ backgroundColor: flashColor }, { backgroundColor: 'transparent' }], { duration: 1200, easing: 'ease-out' });
  }

  // ===========================================================================================
  // Rendering values
  //   Every drawn place is registered in its model view under its pointer, with its kind, so a
  //   change can find the nearest drawn place and decide whether livebind.js already updated it.
  // ===========================================================================================

  // key ("model" or "model/pointer") → { key, model, base: tokens of its location, card, body, rev,
  //   nodes: Map<pointer, node>, windowed }
  const views = new Map();

  function renderNode(view, tokens, value) {
    const kind = kindOf(value);
    const path = bindingPath(view.model, tokens);
    const label = path;
    let node;
    switch (kind) {
      case 'object': {
        const list = h('dl', { class: 'tree' });
        node = { kind, el: list, entries: new Map() };
        view.nodes.set(pointerOf(tokens), node);
        for (const key of Object.keys(value)) addEntry(view, node, tokens, key, value[key]);
        if (node.entries.size === 0) list.append(h('div', { class: 'muted', text: '{ }' }));
        return list;
      }
      case 'table': return renderTable(view, tokens, value, path);
      case 'series': {
        const chart = makeChart(value, label);
        const summary = h('span', { class: 'series-summary muted' });
        node = { kind, el: h('div', { class: 'series' }, chart.svg, summary), chart, summary };
        describeSeries(summary, value);
        break;
      }
      case 'list': {
        if (value.length > VIRTUAL_ROWS) return renderLongList(view, tokens, value, path);
        const list = h('ol', { class: 'list', start: '0' });
        node = { kind, el: list };
        view.nodes.set(pointerOf(tokens), node);
        value.forEach((item, i) => list.append(h('li', {}, renderNode(view, tokens.concat(String(i)), item))));
        if (value.length === 0) list.append(h('li', { class: 'muted', text: 'empty' }));
        return list;
      }
      case 'boolean':
        node = { kind, el: h('input', { type: 'checkbox', class: 'leaf leaf-boolean', 'data-lb-value': path, 'aria-label': label }) };
        break;
      case 'number':
        node = { kind, el: h('input', { class: 'leaf leaf-number', inputmode: 'decimal', 'data-lb-value': path, 'aria-label': label, spellcheck: 'false' }) };
        break;
      case 'string':
        node = { kind, el: h('input', { class: 'leaf leaf-string', 'data-lb-value': path, 'aria-label': label, spellcheck: 'false' }) };
        break;
      default:
        node = { kind, el: h('span', { class: 'leaf leaf-null', text: 'null' }) };
    }
    view.nodes.set(pointerOf(tokens), node);
    return node.el;
  }

  function addEntry(view, node, tokens, key, value) {
    const row = makeEntry(view, tokens, key, value);
    node.el.append(row);
    node.entries.set(key, row);
    return row;
  }

  /**
   * One member of an object: its key (with "open here" for a subtree, "history" for a field) and
   * its value, and the field's history below it when that is open.
   */
  function makeEntry(view, tokens, key, value) {
    const content = h('dd', {}, renderNode(view, tokens.concat(key), value));
    const term = h('dt', { text: key, title: key });
    const target = bindingPath(view.model, tokens.concat(key));
    if (typeof value === 'object' && value !== null) {
      // A subtree can have a card of its own, which streams only it.
      term.append(h('button', { type: 'button', class: 'open-here', 'data-open': target,
                                title: 'open here: a card that streams only ' + target, 'aria-label': 'open ' + target + ' on its own', text: '⤢' }));
    } else {
      term.append(h('button', { type: 'button', class: 'history-toggle', 'data-history': pointerOf(tokens.concat(key)),
                                'aria-expanded': 'false', title: 'history and audit trail of ' + target, 'aria-label': 'history of ' + target, text: '⌁' }));
    }
    const row = h('div', { class: 'entry' }, term, content);
    row.classList.toggle('entry-wide', WIDE.has(kindOf(value)));
    if (view.histories.has(pointerOf(tokens.concat(key)))) toggleHistory(view, row);
    return row;
  }

  /**
   * Sortable column headers and a search box over a table: they swap its tbody for one over a view of
   * the array (data-lb-where, data-lb-order: docs/Browser.md "Views"), which the server arranges when
   * the page streams the array's location or window, and livebind.js otherwise. Clearing both brings
   * the plain rows back. Columns whose names a view cannot write are not sortable.
   */
  function arrangeable(table, body, path, textColumns, limit) {
    const plain = body.cloneNode(true);
    const state = { order: null, descending: false, search: '' };
    const quoted = (text) => JSON.stringify(text).replace(/;/g, '\\u003b');
    const search = h('input', { type: 'search', class: 'table-search', placeholder: 'search', 'aria-label': 'search ' + path });
    let current = body;
    let timer = 0;
    function apply() {
      const where = state.search && textColumns.length
        ? `or(${textColumns.map((c) => `${c}:match:${quoted(state.search)}`).join(',')})` : null;
      const order = state.order ? (state.descending ? '-' : '') + state.order : null;
      const next = where || order
        ? h('tbody', { 'data-lb-each': path, 'data-lb-where': where, 'data-lb-order': order, 'data-lb-limit': limit ? String(limit) : null },
          plain.querySelector('template').cloneNode(true))
        : plain.cloneNode(true);
      current.replaceWith(next);
      current = next;
      for (const th of table.querySelectorAll('thead th[data-column]')) {
        th.setAttribute('aria-sort', th.dataset.column !== state.order ? 'none' : state.descending ? 'descending' : 'ascending');
      }
    }
    for (const th of table.querySelectorAll('thead th')) {
      const column = th.textContent;
      if (!VIEW_NAME.test(column)) continue;
      th.dataset.column = column;
      th.setAttribute('aria-sort', 'none');
      const button = h('button', { type: 'button', class: 'sort', title: 'sort by ' + column, text: column });
      th.replaceChildren(button);
      button.addEventListener('click', () => {
        // Ascending, descending, then the array's own order.
        if (state.order !== column) { state.order = column; state.descending = false; }
        else if (!state.descending) state.descending = true;
        else state.order = null;
        apply();
      });
    }
    search.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => { state.search = search.value.trim(); apply(); }, 200);
    });
    return { search: textColumns.length ? search : null, body: () => current };
  }

  /** A column name a view's key path can hold. */
  const VIEW_NAME = /^[A-Za-z0-9_$@-]+$/;

  function renderTable(view, tokens, rows, path) {
    const columns = columnsOf(rows);
    const cells = columns.map((c) => h('td', { 'data-lb-text': './' + escapeToken(c) }));
    const template = h('template');
    template.content.append(h('tr', {}, ...cells));
    const body = h('tbody', { 'data-lb-each': path, 'data-lb-virtual': rows.length > VIRTUAL_ROWS ? '' : null }, template);
    const table = h('table', { class: 'data' },
      h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col', text: c })))), body);
    const textColumns = columns.filter((c) => VIEW_NAME.test(c) && rows.some((r) => typeof r[c] === 'string'));
    const controls = arrangeable(table, body, path, textColumns, null);
    const numeric = columns.find((c) => c !== 'id' && rows.every((r) => typeof r[c] === 'number'));
    const chart = numeric ? makeChart(rows.map((r) => r[numeric]), path + ' ' + numeric) : null;
    const summary = numeric ? h('span', { class: 'series-summary muted' }) : null;
    if (summary) describeSeries(summary, rows.map((r) => r[numeric]), numeric);
    const el = h('div', { class: 'table-view' }, chart && chart.svg, summary, controls.search, h('div', { class: 'table-scroll' }, table));
    // `body`: the tbody shown now (a sorted or searched view replaces it).
    const node = { kind: 'table', el, get body() { return controls.body(); }, columns, chart, summary, numeric };
    view.nodes.set(pointerOf(tokens), node);
    return el;
  }

  /** A long array that is not a table: one virtual column of its items (objects as JSON). */
  function renderLongList(view, tokens, items, path) {
    const template = h('template');
    template.content.append(h('tr', {}, h('td', { 'data-lb-text': '.' })));
    const body = h('tbody', { 'data-lb-each': path, 'data-lb-virtual': '' }, template);
    const el = h('div', { class: 'table-view' }, h('div', { class: 'table-scroll' }, h('table', { class: 'data' }, body)));
    const node = { kind: 'list', el, body, long: true };
    view.nodes.set(pointerOf(tokens), node);
    return el;
  }

  /**
   * A very long array opened at its location: a virtual table over a server window
   * (data-lb-window), so the page holds the window's rows, never the array. `first` is a row, for
   * the columns.
   */
  function renderWindowed(view, first) {
    const path = bindingPath(view.model, view.base);
    const columns = isPlainObject(first) ? columnsOf([first]) : [];
    const cells = columns.length ? columns.map((c) => h('td', { 'data-lb-text': './' + escapeToken(c) })) : [h('td', { 'data-lb-text': '.' })];
    const template = h('template');
    template.content.append(h('tr', {}, ...cells));
    const body = h('tbody', { 'data-lb-each': path, 'data-lb-virtual': '', 'data-lb-window': String(WINDOW_SIZE) }, template);
    const head = columns.length ? h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col', text: c })))) : null;
    view.length = h('span', { class: 'series-summary muted window-summary' });
    const table = h('table', { class: 'data' }, head, body);
    // Sorted or searched, the server arranges the array and sends the first rows of the view.
    const textColumns = columns.filter((c) => VIEW_NAME.test(c) && typeof first[c] === 'string');
    const search = columns.length ? arrangeable(table, body, path, textColumns, WINDOW_SIZE).search : null;
    view.body.replaceChildren(h('div', { class: 'table-view' }, view.length, search,
      h('div', { class: 'table-scroll' }, table)));
  }

  function describeSeries(summary, values, name) {
    const numbers = values.filter((v) => typeof v === 'number');
    if (numbers.length === 0) { summary.textContent = ''; return; }
    const last = numbers[numbers.length - 1];
    let min = Infinity;
    let max = -Infinity;
    for (const n of numbers) { if (n < min) min = n; if (n > max) max = n; }
    const what = name ? `${name}: ` : '';
    summary.textContent = `${what}${numbers.length} values · last ${round(last)} · ${round(min)}–${round(max)}`;
  }

  function round(n) {
    return Number.isInteger(n) ? String(n) : n.toFixed(2);
  }

  // ===========================================================================================
  // Charts
  //   A small inline-SVG line chart in a fixed viewBox; redrawing only changes `points`.
  // ===========================================================================================

  function makeChart(values, label) {
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 300 60');
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('class', 'chart');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'chart of ' + label);
    const area = document.createElementNS(SVG, 'polygon');
    area.setAttribute('class', 'chart-area');
    const line = document.createElementNS(SVG, 'polyline');
    line.setAttribute('class', 'chart-line');
    line.setAttribute('vector-effect', 'non-scaling-stroke');
    svg.append(area, line);
    const chart = { svg, line, area };
    drawChart(chart, values);
    return chart;
  }

  function drawChart(chart, values) {
    const numbers = values.slice(-CHART_POINTS).filter((v) => typeof v === 'number' && Number.isFinite(v));
    if (numbers.length === 0) {
      chart.line.setAttribute('points', '');
      chart.area.setAttribute('points', '');
      return;
    }
    let min = Infinity;
    let max = -Infinity;
    for (const n of numbers) { if (n < min) min = n; if (n > max) max = n; }
    const span = max - min || 1;
    if (numbers.length === 1) numbers.push(numbers[0]); // one value: a flat line, not an invisible point
    const step = 300 / (numbers.length - 1);
    const points = numbers.map((v, i) => `${(i * step).toFixed(1)},${(56 - ((v - min) / span) * 52).toFixed(1)}`);
    chart.line.setAttribute('points', points.join(' '));
    chart.area.setAttribute('points', `0,60 ${points.join(' ')} ${((numbers.length - 1) * step).toFixed(1)},60`);
  }

  // ===========================================================================================
  // History
  //   "⌁" beside a field opens, below it, the field's history as a live chart (an element with
  //   livebind.js's data-lb-chart, whose window a select changes) and its audit trail of the last
  //   24 hours (GET /models/…?history&audit&from=-24h: time, actor, route, value; newest first).
  //   A token without the `audit` scope (403) is told so. Open panels stay open when their entry is
  //   drawn again.
  // ===========================================================================================

  const HISTORY_WINDOWS = ['15m', '1h', '24h', '7d'];
  const AUDIT_ROWS = 200; // the newest this many writes are listed

  /** Opens or closes the history panel of the entry `row` (its toggle says which field). */
  function toggleHistory(view, row) {
    const toggle = row.querySelector(':scope > dt > .history-toggle');
    const pointer = toggle.getAttribute('data-history');
    const shown = row.querySelector(':scope > .history');
    if (shown) {
      shown.remove();
      view.histories.delete(pointer);
    } else {
      row.append(historyPanel(view.model, tokensOf(pointer)));
      view.histories.add(pointer);
    }
    toggle.setAttribute('aria-expanded', shown ? 'false' : 'true');
  }

  function historyPanel(model, tokens) {
    const path = bindingPath(model, tokens);
    const chart = h('div', { class: 'history-chart', 'data-lb-chart': path, 'data-lb-window': '1h' });
    const span = h('select', { class: 'history-window', 'aria-label': 'history window of ' + path },
      ...HISTORY_WINDOWS.map((w) => h('option', { value: w, text: 'last ' + w, selected: w === '1h' })));
    span.addEventListener('change', () => chart.setAttribute('data-lb-window', span.value)); // livebind.js rebinds it
    const audit = h('div', { class: 'audit' });
    const reload = h('button', { type: 'button', class: 'audit-reload', text: 'reload' });
    reload.addEventListener('click', () => loadAudit(audit, model, tokens));
    loadAudit(audit, model, tokens);
    return h('div', { class: 'history', 'data-history-of': path },
      span, chart, h('div', { class: 'audit-head' }, h('h4', { text: 'Audit trail, last 24 h' }), reload), audit);
  }

  async function loadAudit(box, model, tokens) {
    box.replaceChildren(h('p', { class: 'muted', text: 'loading…' }));
    const url = '/models/' + encodeURIComponent(model) + tokens.map((t) => '/' + encodeURIComponent(escapeToken(t))).join('');
    let response;
    let body = null;
    try {
      response = await LB.fetch(url + '?history&audit&from=-24h', { cache: 'no-store', headers: { Accept: 'application/json' } });
      body = await response.json().catch(() => null);
    } catch (e) {
      box.replaceChildren(h('p', { class: 'audit-note', text: 'The audit trail is unavailable: ' + e.message }));
      return;
    }
    if (!response.ok || !body || !Array.isArray(body.points)) {
      box.replaceChildren(h('p', { class: 'audit-note', text: auditProblem(response.status, body) }));
      return;
    }
    if (!body.points.length) {
      box.replaceChildren(h('p', { class: 'muted audit-note', text: 'No writes here in the last 24 hours.' }));
      return;
    }
    const rows = body.points.slice(-AUDIT_ROWS).reverse().map((p) => h('tr', {},
      h('td', {}, h('time', { datetime: p.time, title: p.time, text: shortTime(p.time) })),
      h('td', { text: p.actor || '' }),
      h('td', { text: p.route || '' }),
      h('td', { class: p.removed ? 'muted' : null, text: p.removed ? 'removed' : preview(p.value, 80) })));
    const more = body.points.length > AUDIT_ROWS ? [h('p', { class: 'muted', text: `the newest ${AUDIT_ROWS} of ${body.points.length} writes` })] : [];
    box.replaceChildren(...more, h('div', { class: 'table-scroll' }, h('table', { class: 'data audit-table' },
      h('thead', {}, h('tr', {}, ...['time', 'actor', 'route', 'value'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, ...rows))));
  }

  /** A time of today as its time of day, an older one with its date too. */
  function shortTime(text) {
    const date = new Date(text);
    return date.toDateString() === new Date().toDateString() ? date.toLocaleTimeString() : date.toLocaleString();
  }

  function auditProblem(status, problem) {
    if (status === 403) return 'The audit trail needs a token with the audit scope, which this one lacks.';
    if (status === 401) return 'The audit trail needs a token: open this page as /#token=YOUR_TOKEN.';
    if (status === 404) return 'No audit trail: this server keeps no history (it needs --data, and --history other than 0).';
    return `The audit trail is unavailable (${status})` + (problem && problem.detail ? ': ' + problem.detail : '.');
  }

  // ===========================================================================================
  // Applying changes
  // ===========================================================================================

  function ensureView(target) {
    let view = views.get(target.key);
    if (view) return view;
    const rev = h('span', { class: 'rev muted' });
    const body = h('div', { class: 'card-body' });
    const close = h('button', { type: 'button', class: 'card-close', 'aria-label': 'close ' + target.key, title: 'close', text: '×' });
    close.addEventListener('click', () => closeTarget(target.key, true));
    body.append(h('p', { class: 'muted', text: 'loading…' }));
    const title = target.tokens.length
      ? h('h3', { title: 'this card streams only this location' }, target.model, h('span', { class: 'location', text: pointerOf(target.tokens) }))
      : h('h3', { text: target.model });
    const card = h('article', { class: 'card', 'data-model': target.model, 'data-path': pointerOf(target.tokens) },
      h('header', { class: 'card-header' }, title, h('span', {}, rev, close)), body);
    view = { key: target.key, model: target.model, base: target.tokens, card, body, rev, nodes: new Map(), windowed: false,
             histories: new Set() }; // histories: pointers of the fields whose history is open
    views.set(target.key, view);
    const cards = $('#models');
    const after = Array.from(cards.children).find((c) => cardKey(c) > target.key);
    cards.insertBefore(card, after || null);
    return view;
  }

  function cardKey(card) {
    return card.getAttribute('data-model') + (card.getAttribute('data-path') || '');
  }

  function viewsOf(model) {
    return Array.from(views.values()).filter((v) => v.model === model);
  }

  /** Draws a card again from what livebind.js holds. */
  function renderView(view, rev) {
    if (rev !== undefined) view.rev.textContent = 'rev ' + rev;
    if (view.windowed) return; // livebind.js draws the window's rows
    view.nodes.clear();
    const value = LB.peek(view.model, pointerOf(view.base));
    if (value === undefined && view.base.length) {
      view.body.replaceChildren(h('p', { class: 'muted', text: 'nothing at this location (yet)' }));
      return;
    }
    view.body.replaceChildren(renderNode(view, view.base, value));
  }

  function dropModel(model) {
    for (const view of viewsOf(model)) {
      view.card.remove();
      views.delete(view.key);
    }
  }

  /** Forgets every registered place at or below `pointer`. */
  function forget(view, pointer) {
    for (const key of Array.from(view.nodes.keys())) {
      if (key === pointer || key.startsWith(pointer + '/')) view.nodes.delete(key);
    }
  }

  /** Draws a place again (its shape changed) and highlights it. */
  function redraw(view, tokens, node) {
    const pointer = pointerOf(tokens);
    forget(view, pointer);
    const value = LB.peek(view.model, pointer);
    const fresh = renderNode(view, tokens, value);
    node.el.replaceWith(fresh);
    const entry = fresh.parentElement && fresh.parentElement.parentElement;
    if (entry && entry.classList.contains('entry')) entry.classList.toggle('entry-wide', WIDE.has(kindOf(value)));
    if (!WIDE.has(kindOf(value))) flash(fresh); // a whole table flashing is noise; its rows flash on their own
  }

  function applyChange(c) {
    if (c.kind === 'drop') return dropModel(c.model);
    for (const view of viewsOf(c.model)) {
      try {
        applyToView(view, c);
      } catch (error) {
        renderView(view, c.rev); // never leave a card half drawn
      }
    }
  }

  function applyToView(view, c) {
    const tokens = tokensOf(c.path);
    const mine = isPrefix(view.base, tokens);
    // A change elsewhere in the model (the model streamed whole for another card) is not this card's.
    if (!mine && !isPrefix(tokens, view.base)) return;
    if (c.rev !== undefined) view.rev.textContent = 'rev ' + c.rev;
    if (view.windowed) {
      const length = c.window ? c.window.length : (LB.peek(view.model, pointerOf(view.base)) || []).length;
      if (length !== undefined) view.length.textContent = `${length.toLocaleString('en')} rows · a window of ${WINDOW_SIZE} from the server`;
      return;
    }
    // A snapshot, or a change above the card's location (its value replaced): draw it again.
    if (c.kind === 'snapshot' || !mine) return renderView(view, c.rev);

    let depth = tokens.length;
    let node = view.nodes.get(pointerOf(tokens));
    while (!node && depth > view.base.length) node = view.nodes.get(pointerOf(tokens.slice(0, --depth)));
    if (!node) return renderView(view, c.rev);
    const at = tokens.slice(0, depth);
    const current = LB.peek(c.model, pointerOf(at));
    const kind = kindOf(current);

    // A sorted or searched table shows a view: its rows are not the array's.
    const arranged = node.kind === 'table' && (node.body.hasAttribute('data-lb-where') || node.body.hasAttribute('data-lb-order'));
    if (node.kind === 'table' && kind === 'table' && columnsOf(current).join('\n') === node.columns.join('\n')
        && (current.length <= VIRTUAL_ROWS || arranged || node.body.hasAttribute('data-lb-virtual'))) {
      // livebind.js has applied the row operation; highlight the row and redraw the chart.
      const index = depth === tokens.length ? (c.kind === 'move' ? c.to : c.index) : Number(tokens[depth]);
      if (c.kind !== 'remove' && index !== undefined && !arranged && !node.body.hasAttribute('data-lb-virtual')) flash(node.body.rows[index]);
      if (node.chart) {
        const column = current.map((r) => r[node.numeric]);
        drawChart(node.chart, column);
        describeSeries(node.summary, column, node.numeric);
      }
      return;
    }
    if (node.kind === 'list' && node.long && kind === 'list') return; // livebind.js keeps the virtual list
    if (node.kind === 'series' && kind === 'series') {
      drawChart(node.chart, current);
      describeSeries(node.summary, current);
      return;
    }
    if (node.kind === 'object' && kind === 'object' && depth === tokens.length - 1 && c.index === undefined) {
      // One member set or removed: touch only its entry.
      const key = tokens[depth];
      const entry = node.entries.get(key);
      forget(view, pointerOf(tokens));
      if (c.kind === 'remove') {
        if (entry) entry.remove();
        node.entries.delete(key);
        return;
      }
      if (entry) {
        const fresh = makeEntry(view, at, key, current[key]);
        entry.replaceWith(fresh);
        node.entries.set(key, fresh);
        flash(fresh);
      } else {
        flash(addEntry(view, node, at, key, current[key]));
      }
      return;
    }
    if (depth === tokens.length && node.kind === kind && !['object', 'list', 'table'].includes(kind)) {
      flash(node.el); // a leaf: its data-lb-value binding already shows the new value
      return;
    }
    redraw(view, at, node);
  }

  // ===========================================================================================
  // Model list
  //   GET /models, polled; the filter narrows the names as you type. A name's button opens its
  //   card (and its stream) or closes it. With few models, all open by themselves (unless the
  //   address names what to open: see Locations).
  // ===========================================================================================

  let names = [];            // every model on the server, sorted
  let linked = false;        // the address named what to open: a small server then opens nothing else
  let listed = null;         // names already seen, to open new ones on a small server
  const open = new Map();    // card key ("model" or "model/pointer") → the end of its subscription

  /**
   * Opens the card of a model or of a location ("model/pointer"); `byUser`: the address then names
   * the open cards. A location is probed first: a very long array there is read through a window.
   */
  async function openTarget(text, byUser) {
    const target = parseTarget(text);
    if (!target || open.has(target.key)) return;
    open.set(target.key, () => {}); // taken while a location is probed
    const view = ensureView(target);
    if (byUser) writeHash();
    showList();
    summarize();
    let end;
    if (target.tokens.length) {
      const probe = await probeLocation(target);
      if (views.get(target.key) !== view) return; // closed meanwhile
      if (probe && probe.length > WINDOW_ROWS) {
        view.windowed = true;
        renderWindowed(view, probe.first); // its table asks for the window itself
        applyToView(view, { model: target.model, path: pointerOf(target.tokens), kind: 'snapshot', window: probe.window, rev: probe.rev });
      } else {
        end = LB.subscribe(target.key);    // ?sub=model/pointer: this location only
      }
    } else {
      end = LB.subscribe(target.model);    // the whole model
    }
    if (end) open.set(target.key, end);
    if (!view.windowed && LB.peek(target.model, pointerOf(target.tokens)) !== undefined) renderView(view);
  }

  /** Closes one card and ends its subscription (its bindings release theirs as the card goes). */
  function closeTarget(key, byUser) {
    const end = open.get(key);
    if (!end) return;
    open.delete(key);
    end();
    const view = views.get(key);
    if (view) {
      view.card.remove();
      views.delete(key);
    }
    if (byUser) writeHash();
    showList();
    summarize();
  }

  /** Closes every card of a dropped model. */
  function closeModel(model) {
    for (const view of viewsOf(model)) closeTarget(view.key, false);
    dropModel(model);
  }

  /** The filter as a location ("sensor/readings") when it holds a "/", else null. */
  function typedLocation() {
    const text = $('#model-filter').value.trim();
    return text.includes('/') ? parseTarget(text) : null;
  }

  let listShown = ''; // what the list shows, so that polling leaves an unchanged list (and its focus) alone

  function showList() {
    const location = typedLocation();
    const query = (location ? location.model : $('#model-filter').value.trim()).toLowerCase();
    const matches = query ? names.filter((n) => n.toLowerCase().includes(query)) : names;
    const shown = matches.slice(0, LIST_LIMIT);
    const offered = location && names.includes(location.model) ? location.key : null;
    const signature = JSON.stringify([offered, offered && open.has(offered), shown, shown.map((name) => open.has(name))]);
    if (signature !== listShown) {
      listShown = signature;
      const items = shown.map((name) =>
        h('li', {}, h('button', { type: 'button', 'data-model': name, 'aria-pressed': open.has(name) ? 'true' : 'false', text: name })));
      if (offered) {
        items.unshift(h('li', { class: 'open-location' }, h('button', {
          type: 'button', 'data-open': offered, 'aria-pressed': open.has(offered) ? 'true' : 'false',
          title: 'a card that streams only this location', text: 'open ' + offered + ' only',
        })));
      }
      $('#model-list').replaceChildren(...items);
    }
    const more = matches.length > LIST_LIMIT ? ` · the first ${LIST_LIMIT} shown: type to narrow` : '';
    $('#model-count').textContent = names.length ? `${matches.length} of ${names.length} models${more}` : '';
    $('#models-empty').hidden = names.length > 0;
  }

  /** Every entry of a paged list (`GET /models`, `GET /bindings`): pages of --max-list-bytes, each
   *  but the last ending with `next`, asked for again with `?after=`. */
  async function fetchPages(path, member) {
    const entries = [];
    for (let after = null, pages = 0; pages < 1000; pages++) {
      const query = after === null ? '' : '?after=' + encodeURIComponent(after);
      const response = await LB.fetch(path + query, { cache: 'no-store' });
      if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
      const page = await response.json();
      entries.push(...(Array.isArray(page) ? page : page[member] || []));
      if (typeof page.next !== 'string') break;
      after = page.next;
    }
    return entries;
  }

  async function loadModels() {
    let list;
    try {
      list = await fetchPages('/models', 'models');
    } catch (e) {
      $('#model-count').textContent = 'Models unavailable: ' + e.message;
      return;
    }
    names = list.map((m) => m.name).sort();
    if (names.length <= AUTO_OPEN && !linked) {
      for (const name of names) if (!listed || !listed.has(name)) openTarget(name, false);
    }
    listed = new Set(names);
    showList();
    summarize();
  }

  $('#model-filter').addEventListener('input', showList);
  $('#model-filter').addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    const location = typedLocation();
    if (location) openTarget(location.key, true);
    else {
      const button = $('#model-list button[data-model]');
      if (button && $('#model-list').childElementCount === 1) openTarget(button.getAttribute('data-model'), true);
    }
  });
  $('#model-list').addEventListener('click', (e) => {
    const button = e.target.closest('button[data-model], button[data-open]');
    if (!button) return;
    const key = button.getAttribute('data-model') || button.getAttribute('data-open');
    if (open.has(key)) closeTarget(key, true); else openTarget(key, true);
  });
  $('#models').addEventListener('click', (e) => {
    const button = e.target.closest('button.open-here');
    if (button) openTarget(button.getAttribute('data-open'), true);
    const toggle = e.target.closest('button.history-toggle');
    const view = toggle && views.get(cardKey(toggle.closest('.card')));
    if (view) toggleHistory(view, toggle.closest('.entry'));
  });

  // ===========================================================================================
  // Locations
  //   The address names the open cards, #open=sensor/readings&open=orders, so a card can be
  //   linked (and reloading keeps what is open); a page opened so opens only those. Before a
  //   location's card subscribes, one short request (GET /events?sub=…;first=1, read up to its
  //   snapshot) says whether an array is there and how long it is.
  // ===========================================================================================

  /** The open cards the address names. */
  function hashTargets() {
    return new URLSearchParams(window.location.hash.slice(1)).getAll('open').map(parseTarget).filter(Boolean);
  }

  /** Writes the open cards into the address (keeping anything else in the fragment). */
  function writeHash() {
    const params = new URLSearchParams(window.location.hash.slice(1));
    params.delete('open');
    const parts = params.toString() ? [params.toString()] : [];
    for (const key of Array.from(open.keys()).sort()) parts.push('open=' + encodeURIComponent(key).replace(/%2F/g, '/'));
    window.history.replaceState(null, '', window.location.pathname + window.location.search + (parts.length ? '#' + parts.join('&') : ''));
  }

  /** Opens what the address names and closes the rest; false when it names nothing. */
  function followHash() {
    const wanted = hashTargets();
    if (!wanted.length) return false;
    const keys = new Set(wanted.map((t) => t.key));
    for (const key of Array.from(open.keys())) if (!keys.has(key)) closeTarget(key, false);
    for (const target of wanted) openTarget(target.key, false);
    return true;
  }

  /**
   * What is at a location, from the snapshot of a one-row window: {length, first, window, rev}
   * for an array (length 0 also for a value that is not one), or null when the server cannot say
   * (no path subscriptions, refused, or no answer within 5 s).
   */
  async function probeLocation(target) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 5000);
    try {
      const sub = target.model + pointerOf(target.tokens) + ';first=1';
      const response = await LB.fetch('/events?sub=' + encodeURIComponent(sub),
        { headers: { Accept: 'text/event-stream' }, cache: 'no-store', signal: controller.signal });
      if (!response.ok || !response.body) return null;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let text = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done || text.length > 65536) return null;
        text += decoder.decode(value, { stream: true });
        const blocks = text.split('\n\n');
        text = blocks.pop();
        for (const block of blocks) {
          const type = (/^event: ?(.*)$/m.exec(block) || [])[1];
          const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
          if (type === 'snapshot') {
            const snapshot = JSON.parse(data);
            if (!snapshot.window) return null; // a server that ignored ?sub=
            return { length: snapshot.window.length, first: (snapshot.value || [])[0], window: snapshot.window, rev: snapshot.rev };
          }
          if (type && type !== 'stream') return null;
        }
      }
    } catch (e) {
      return null;
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  }

  // ===========================================================================================
  // Event log
  // ===========================================================================================

  let eventCount = 0;

  function clock() {
    const d = new Date();
    return d.toTimeString().slice(0, 8) + '.' + String(d.getMilliseconds()).padStart(3, '0');
  }

  function logEvent(c) {
    eventCount += 1;
    const where = c.model ? c.model + (c.path || '') : '';
    let what = '';
    if (c.kind === 'move') what = `${c.from} → ${c.to}`;
    else if (c.kind === 'remove' && c.index !== undefined) what = `[${c.index}]`;
    else if (c.kind === 'resync') what = c.reason || '';
    else if (c.value !== undefined) what = (c.index !== undefined ? `[${c.index}] ` : '') + preview(c.value, 90);
    const item = h('li', { class: 'log-item kind-' + c.kind },
      h('time', { class: 'muted', text: clock() }),
      h('span', { class: 'badge', text: c.kind }),
      h('span', { class: 'log-path', text: where }),
      h('span', { class: 'log-value', text: what }),
      h('span', { class: 'log-id muted', text: c.id ? '#' + c.id : '' }));
    const log = $('#log');
    log.prepend(item);
    while (log.childElementCount > LOG_LIMIT) log.lastElementChild.remove();
    $('#log-count').textContent = `${Math.min(eventCount, LOG_LIMIT)} of ${eventCount}`;
  }

  function summarize() {
    const locations = Array.from(open.keys()).filter((key) => key.includes('/')).length;
    const where = locations ? ` · ${locations} location${locations === 1 ? '' : 's'}` : '';
    $('#summary').textContent = `${open.size - locations} of ${names.length} model${names.length === 1 ? '' : 's'} open${where} · ${eventCount} events`;
  }

  // ===========================================================================================
  // Bindings
  //   Polled from GET /bindings; the switch sends PATCH /bindings/{id} {"enabled": …}.
  // ===========================================================================================

  const bindingRows = new Map(); // id → { item, fires, error, toggle, last }

  function transformText(t) {
    if (t === null || t === undefined) return '';
    if (typeof t === 'string') return t;
    const { name, ...rest } = t;
    const args = Object.entries(rest).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
    return name + (args.length ? `(${args.join(', ')})` : '');
  }

  function bindingRow(b) {
    const toggle = h('input', { type: 'checkbox', class: 'switch', 'aria-label': `binding ${b.id} enabled` });
    toggle.addEventListener('change', () => setEnabled(b.id, toggle));
    const fires = h('span', { class: 'fires' });
    const error = h('p', { class: 'binding-error' });
    const transform = h('span', { class: 'transform' });
    const item = h('li', { class: 'binding', 'data-binding': b.id },
      h('div', { class: 'binding-flow' },
        h('code', { text: b.source }), h('span', { class: 'arrow', text: b.mode === 'twoWay' ? '⇄' : '→' }), h('code', { text: b.target })),
      h('div', { class: 'binding-meta' }, transform, fires, h('label', { class: 'switch-label', title: 'enabled' }, toggle)),
      error);
    return { item, fires, error, toggle, transform, last: null };
  }

  function showBindings(list) {
    const container = $('#bindings');
    const seen = new Set();
    for (const b of list) {
      const id = String(b.id);
      seen.add(id);
      let row = bindingRows.get(id);
      if (!row) {
        row = bindingRow(b);
        bindingRows.set(id, row);
        container.append(row.item);
      }
      const fires = `fired ${b.fireCount ?? 0}×`;
      if (row.fires.textContent !== fires) {
        if (row.last) flash(row.fires);
        row.fires.textContent = fires;
      }
      row.transform.textContent = transformText(b.transform);
      row.error.textContent = b.lastError ? b.lastError : '';
      row.error.hidden = !b.lastError;
      if (!row.busy) row.toggle.checked = b.enabled !== false;
      row.item.classList.toggle('disabled', b.enabled === false);
      row.last = b;
    }
    for (const [id, row] of bindingRows) {
      if (!seen.has(id)) { row.item.remove(); bindingRows.delete(id); }
    }
    $('#bindings-status').textContent = list.length ? '' : 'No bindings.';
    $('#bindings-status').hidden = list.length > 0;
  }

  async function loadBindings() {
    try {
      showBindings(await fetchPages('/bindings', 'bindings'));
    } catch (e) {
      $('#bindings-status').hidden = false;
      $('#bindings-status').textContent = 'Bindings unavailable: ' + e.message;
    }
  }

  async function setEnabled(id, toggle) {
    const row = bindingRows.get(String(id));
    const wanted = toggle.checked;
    if (row) row.busy = true;
    try {
      const response = await LB.fetch(`/bindings/${encodeURIComponent(id)}`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ enabled: wanted }),
      });
      if (!response.ok) {
        const problem = await response.json().catch(() => ({}));
        throw new Error(problem.detail || `PATCH answered ${response.status}`);
      }
      toggle.removeAttribute('aria-invalid');
    } catch (e) {
      toggle.checked = !wanted;
      toggle.setAttribute('aria-invalid', 'true');
      if (row) { row.error.hidden = false; row.error.textContent = e.message; }
    } finally {
      if (row) row.busy = false;
      loadBindings();
    }
  }

  // ===========================================================================================
  // Start
  // ===========================================================================================

  document.addEventListener('livebind:state', (e) => {
    $('#connection-state').textContent = e.detail.state;
  });

  let revokedHint = false; // the hint says the token expired: it goes once the stream is back
  document.addEventListener('livebind:auth-revoked', (e) => {
    const hint = $('#access-hint');
    revokedHint = true;
    hint.textContent = (e.detail.reason === 'expired' ? 'Your token expired' : 'Your session ended')
      + ': live updates stopped. Add #token=NEW_TOKEN to the address to resume.';
    hint.hidden = false;
  });

  document.addEventListener('livebind:state', (e) => {
    if (e.detail.state !== 'live' || !revokedHint) return;
    revokedHint = false;
    $('#access-hint').hidden = true;
  });

  // A write refused for want of a token (401) or of rights (403): say how to get them.
  document.addEventListener('livebind:error', (e) => {
    const status = e.detail && e.detail.status;
    if (status !== 401 && status !== 403) return;
    const hint = $('#access-hint');
    hint.textContent = status === 401
      ? 'Read-only: this server needs a token to write. Open this page as /#token=YOUR_TOKEN.'
      : 'Refused: ' + e.detail.reason;
    hint.hidden = false;
  });

  linked = followHash(); // before the first GET /models: a linked page opens only what it names
  window.addEventListener('hashchange', followHash);

  document.addEventListener('livebind:change', (e) => {
    const change = e.detail;
    if (change.model && !viewsOf(change.model).length) return;
    logEvent(change);
    if (change.kind === 'drop') {
      closeModel(change.model);
      return;
    }
    applyChange(change);
    summarize();
  });

  // In a cluster the event stream's node is named in the header (livebind.js reads its
  // LiveBind-Node header; a reconnect may land on another node). A single server names none.
  function showNode(node) {
    $('#node').textContent = node ? 'node ' + node : '';
    $('#node').hidden = !node;
  }
  document.addEventListener('livebind:state', (e) => showNode(e.detail.state === 'live' && e.detail.node));

  $('#connection-state').textContent = LB.state || 'connecting';
  showNode(LB.state === 'live' && LB.node);
  summarize();
  loadModels();
  loadBindings();
  setInterval(() => { if (!document.hidden) { loadBindings(); loadModels(); } }, 1500);
})();
