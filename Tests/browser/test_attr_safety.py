"""data-lb-attr never turns model data into code (issue 13, item 5).

The page's Content-Security-Policy is bypassed (CDP `Page.setBypassCSP`) in every test here, so livebind.js
is the only guard: the server's CSP would otherwise block most of these vectors by itself. Hostile values
are written with plain HTTP to the real server. A refusal is checked three ways: the attribute is absent,
a `livebind:error` names the element, the attribute and the value, and no script ran (`window.pwned`
stays unset after the link is followed, the form sent or the frame loaded). `test_the_probe_sees_script_run`
shows each probe does see a script run, within the time the refusal tests wait, when the same value is
set directly.
"""
import pytest

from conftest import open_page, wait

PAGE = "/t/attr-safety.html"
START = "https://example.invalid/start"
MODEL = {
    "ready": "yes", "url": START, "frame": None, "name": "avatar", "target": "title",
    "code": "", "html": "", "css": "", "script": "", "page": "",
}
PAYLOAD = "javascript:void(window.top.pwned='{}')"
SETTLE_MS = 500  # how long a refusal test waits for a script that must not run

# Installed before any script of the page (top frame only): the probe and what livebind.js reports.
RECORDER = """
if (window === window.top) {
  window.errors = [];
  window.applied = [];
  document.addEventListener('livebind:error', (e) => {
    const d = e.detail;
    window.errors.push({
      id: d.element ? d.element.id || d.element.dataset.test || null : null, attribute: d.attribute,
      name: d.name || null, path: d.path, reason: d.reason, value: d.value === undefined ? null : d.value });
  });
  document.addEventListener('livebind:change', (e) => window.applied.push(String(e.detail.id)));
}
"""

FIND = "const el = document.getElementById(arguments[0]) || document.querySelector(`[data-test='${arguments[0]}']`);"

# Follows the link, sends the form or clicks the element (a frame needs nothing; SVG: the enclosing link).
FIRE = FIND + """
if (el instanceof HTMLFormElement) el.requestSubmit();
else if (el instanceof HTMLElement) el.click();
else if (el instanceof SVGElement) {
  const link = el.closest('a');
  if (link) link.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));
}
"""


@pytest.fixture()
def unguarded(page):
    """The browser with the page's CSP bypassed and the recorder installed before livebind.js runs."""
    page.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
    added = page.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    yield page
    page.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})
    page.execute_cdp_cmd("Page.setBypassCSP", {"enabled": False})


def open_attack(page, server, **values):
    server.put("/models/attack", dict(MODEL, **values))
    open_page(page, server.base, PAGE)
    wait(page, lambda d: d.execute_script("return document.getElementById('ready').textContent") == "yes",
         "the attack model never reached the page")


def write(page, server, member, value=None, raw=None):
    """PUTs /models/attack/<member> ("": the whole model; raw: the exact JSON body); waits until applied."""
    url = "/models/attack" + ("/" + member if member else "")
    status, body = server.request("PUT", url, raw if raw is not None else value)
    assert status in (200, 201), f"PUT {member} → {status} {body}"
    wait(page, lambda d: str(body["id"]) in d.execute_script("return window.applied"),
         f"the write of {member} ({body['id']}) never reached the page")


def attr(page, element_id, name):
    return page.execute_script(FIND + "return el && el.getAttribute(arguments[1])", element_id, name)


def errors_for(page, element_id):
    return [e for e in page.execute_script("return window.errors") if e["id"] == element_id]


def fire(page, element_id):
    page.execute_script(FIRE, element_id)


def pwned_after_settling(page):
    """window.pwned after SETTLE_MS: a script started by a link, form or frame has run by then."""
    return page.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "setTimeout(() => done(window.pwned === undefined ? null : String(window.pwned)), arguments[0]);",
        SETTLE_MS)


# ---- URL-valued attributes: the scheme allowlist ---------------------------------------------

OBFUSCATED = {
    "plain": PAYLOAD.format("plain"),
    "leading spaces": "   " + PAYLOAD.format("spaces"),
    "leading control": "\u0001" + PAYLOAD.format("control"),
    "trailing control": PAYLOAD.format("trailing") + "\u0000",
    "mixed case": PAYLOAD.format("case").replace("javascript", "JaVaScRiPt"),
    "tab inside": PAYLOAD.format("tab").replace("java", "java\t", 1),
    "newline inside": PAYLOAD.format("newline").replace("java", "java\n", 1),
    # Browsers read this one as a relative path; livebind.js trims it like a space and refuses it.
    "leading no-break space": "\u00a0" + PAYLOAD.format("nbsp"),
    "vbscript": "vbscript:msgbox(1)",
    "data html": "data:text/html,<script>parent.pwned='data'</script>",
    "data svg": "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' onload='parent.pwned=1'/>",
    "data png on a link": "data:image/png;base64,iVBORw0KGgo=",
    "blob": "blob:http://127.0.0.1/1234",
    "file": "file:///etc/passwd",
}


@pytest.mark.parametrize("value", OBFUSCATED.values(), ids=OBFUSCATED.keys())
def test_hostile_link_is_refused(unguarded, server, value):
    open_attack(unguarded, server)
    wait(unguarded, lambda d: attr(d, "a-href", "href") == START)
    write(unguarded, server, "url", value)
    assert attr(unguarded, "a-href", "href") is None
    [error] = errors_for(unguarded, "a-href")
    assert error["attribute"] == "data-lb-attr" and error["name"] == "href" and error["path"] == "attack.url"
    assert error["value"] == value and "unsafe" in error["reason"]
    fire(unguarded, "a-href")
    assert pwned_after_settling(unguarded) is None


def test_escape_decoded_by_json_is_refused(unguarded, server):
    """The server decodes \\u006a: livebind.js sees, and refuses, the javascript: URL it makes."""
    open_attack(unguarded, server)
    write(unguarded, server, "url", raw=b'"\\u006aavascript:void(window.top.pwned=\'escape\')"')
    assert attr(unguarded, "a-href", "href") is None
    assert errors_for(unguarded, "a-href")[0]["value"].startswith("javascript:")


def test_entity_is_not_decoded(unguarded, server):
    """setAttribute decodes no entities: javascript&#58;… is the relative URL it looks like."""
    open_attack(unguarded, server)
    write(unguarded, server, "url", "javascript&#58;void(window.top.pwned='entity')")
    assert attr(unguarded, "a-href", "href") == "javascript&#58;void(window.top.pwned='entity')"
    assert unguarded.execute_script("return document.getElementById('a-href').protocol") == "http:"


# Each URL-valued attribute on its element, with a value only its own scheme check can refuse. The frame's
# member starts empty, so its document is a same-origin about:blank a javascript: URL could reach.
URL_CASES = {
    "a href": ("a-href", "href", "url", PAYLOAD.format("a")),
    "form action": ("form-action", "action", "url", PAYLOAD.format("form")),
    "button formaction": ("button-formaction", "formaction", "url", PAYLOAD.format("formaction")),
    "iframe src": ("iframe-src", "src", "frame", PAYLOAD.format("iframe")),
    "iframe src data html": ("iframe-src", "src", "frame", "data:text/html,<p>hello"),
    "img src": ("img-src", "src", "url", PAYLOAD.format("img")),
    "img src data svg": ("img-src", "src", "url", "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>"),
    "img srcset candidate": ("img-srcset", "srcset", "url", "/a.png 1x, " + PAYLOAD.format("srcset") + " 2x"),
    "img srcset data": ("img-srcset", "srcset", "url", "data:image/png;base64,iVBORw0KGgo= 1x"),
    "video poster": ("video-poster", "poster", "url", PAYLOAD.format("poster")),
    "blockquote cite": ("blockquote-cite", "cite", "url", PAYLOAD.format("cite")),
    "table background": ("table-background", "background", "url", PAYLOAD.format("background")),
    "a ping list": ("a-ping", "ping", "url", "https://example.invalid/p " + PAYLOAD.format("ping")),
    "svg a href": ("svg-href", "href", "url", PAYLOAD.format("svg")),
}


@pytest.mark.parametrize("element_id, name, member, value", URL_CASES.values(), ids=URL_CASES.keys())
def test_url_attribute_refuses_script_schemes(unguarded, server, element_id, name, member, value):
    open_attack(unguarded, server)
    wait(unguarded, lambda d: attr(d, element_id, name) == MODEL[member],
         lambda: f"{element_id} {name} is {attr(unguarded, element_id, name)!r} before the attack")
    write(unguarded, server, member, value)
    assert attr(unguarded, element_id, name) is None
    [error] = errors_for(unguarded, element_id)
    assert error["name"] == name and error["path"] == "attack." + member and error["value"] == value
    fire(unguarded, element_id)
    assert pwned_after_settling(unguarded) is None


# ---- Legitimate values still apply live ------------------------------------------------------

LEGITIMATE = {
    "https": ("a-href", "href", "https://example.invalid/next?q=1#x"),
    "upper-case https": ("a-href", "href", "HTTPS://EXAMPLE.INVALID/UP"),
    "http": ("a-href", "href", "http://example.invalid/"),
    "absolute path": ("a-href", "href", "/t/text.html"),
    "relative path": ("a-href", "href", "text.html"),
    "path with a colon": ("a-href", "href", "./javascript:not-a-scheme"),
    "scheme-relative": ("a-href", "href", "//example.invalid/p"),
    "fragment": ("a-href", "href", "#ready"),
    "query": ("a-href", "href", "?page=2"),
    "mailto": ("a-href", "href", "mailto:ops@example.invalid?subject=hi"),
    "tel": ("a-href", "href", "tel:+15555550100"),
    "form action": ("form-action", "action", "/t/submit"),
    "data png on img": ("img-src", "src", "data:image/png;base64,iVBORw0KGgo="),
    "data webp on img": ("img-src", "src", "data:image/webp;base64,UklGRg=="),
    "srcset": ("img-srcset", "srcset", "/a.png 1x, https://example.invalid/b.png 2x"),
    "ping list": ("a-ping", "ping", "https://example.invalid/p /t/p"),
    "svg href": ("svg-href", "href", "https://example.invalid/svg"),
}


@pytest.mark.parametrize("element_id, name, value", LEGITIMATE.values(), ids=LEGITIMATE.keys())
def test_legitimate_values_apply_live(unguarded, server, element_id, name, value):
    open_attack(unguarded, server)
    wait(unguarded, lambda d: attr(d, element_id, name) == START)
    write(unguarded, server, "url", value)
    assert attr(unguarded, element_id, name) == value
    assert errors_for(unguarded, element_id) == []


def test_a_refused_value_gives_way_to_the_next_good_one(unguarded, server):
    open_attack(unguarded, server)
    write(unguarded, server, "url", PAYLOAD.format("between"))
    assert attr(unguarded, "a-href", "href") is None
    write(unguarded, server, "url", "https://example.invalid/after")
    assert attr(unguarded, "a-href", "href") == "https://example.invalid/after"
    assert len(errors_for(unguarded, "a-href")) == 1


def test_refused_value_in_a_snapshot(unguarded, server):
    """A hostile value already in the model when the page opens is refused on the first apply."""
    open_attack(unguarded, server, url=PAYLOAD.format("snapshot"))
    wait(unguarded, lambda d: errors_for(d, "a-href"), "no livebind:error for the snapshot's value")
    assert attr(unguarded, "a-href", "href") is None
    fire(unguarded, "a-href")
    assert pwned_after_settling(unguarded) is None


# ---- id and name: no DOM clobbering ------------------------------------------------------------

def test_id_and_name_never_shadow_document_properties(unguarded, server):
    """<img name="querySelector"> would make document.querySelector that image, livebind.js's own included."""
    open_attack(unguarded, server)
    wait(unguarded, lambda d: attr(d, "img-name", "name") == "avatar" and attr(d, "div-id", "id") == "avatar")
    hostile = ["querySelector", "dispatchEvent", "documentElement", "action"]
    for value in hostile:
        write(unguarded, server, "name", value)
        assert attr(unguarded, "img-name", "name") is None and attr(unguarded, "div-id", "id") is None
        assert unguarded.execute_script("return typeof document.querySelector + typeof document.dispatchEvent") \
            == "functionfunction"
    assert [e["value"] for e in errors_for(unguarded, "img-name")] == hostile
    assert [e["value"] for e in errors_for(unguarded, "div-id")] == hostile
    write(unguarded, server, "name", "avatar-2")
    assert attr(unguarded, "img-name", "name") == "avatar-2" and attr(unguarded, "div-id", "id") == "avatar-2"


# ---- Names refused when the binding is made ------------------------------------------------------

REFUSED_NAMES = {
    "onclick": ("div-onclick", "onclick"),
    "style": ("div-style", "style"),
    "iframe srcdoc": ("iframe-srcdoc", "srcdoc"),
    "iframe sandbox": ("iframe-sandbox", "sandbox"),
    "iframe allow": ("iframe-allow", "allow"),
    "a data-lb-* binding": ("div-binding", "data-lb-text"),
    "object data": ("object-data", "data"),
    "embed src": ("embed-src", "src"),
    "script src": ("script-src", "src"),
    "base href": ("base-href", "href"),
    "link href": ("link-href", "href"),
    "meta content": ("meta-content", "content"),
    "svg set to": ("set-to", "to"),
    "svg animate values": ("animate-values", "values"),
    "svg animate from": ("animate-from", "from"),
    "svg animate by": ("animate-by", "by"),
    "svg set attributeName": ("set-attributename", "attributeName"),
}

HOSTILE_MODEL = {
    "url": PAYLOAD.format("animation"),
    "code": "window.top.pwned='code'",
    "html": "<script src='/t/pwn.js'></script>",
    "css": "background: url(https://example.invalid/leak)",
    "script": "/t/pwn.js",
    "page": "/t/pwn.html",
    "target": "href",
}


@pytest.mark.parametrize("element_id, name", REFUSED_NAMES.values(), ids=REFUSED_NAMES.keys())
def test_code_bearing_names_are_refused(unguarded, server, element_id, name):
    open_attack(unguarded, server)
    [error] = errors_for(unguarded, element_id)
    assert error["attribute"] == "data-lb-attr" and error["name"] == name and "not allowed" in error["reason"]
    write(unguarded, server, "", dict(MODEL, **HOSTILE_MODEL))
    assert attr(unguarded, element_id, name) is None
    assert unguarded.execute_script("return document.baseURI") == server.base + PAGE
    fire(unguarded, element_id)
    assert pwned_after_settling(unguarded) is None


# ---- data-lb-text: never the text of a script or a style sheet ------------------------------------

@pytest.mark.parametrize("element_id", ["script-text", "style-text"])
def test_text_of_script_and_style_is_refused(unguarded, server, element_id):
    open_attack(unguarded, server)
    [error] = errors_for(unguarded, element_id)
    assert error["attribute"] == "data-lb-text" and "not allowed" in error["reason"]
    write(unguarded, server, "code", "window.top.pwned='script text'")
    write(unguarded, server, "css", "body { display: none }")
    assert unguarded.execute_script("return document.getElementById(arguments[0]).textContent", element_id) == ""
    assert pwned_after_settling(unguarded) is None


# ---- The probes work --------------------------------------------------------------------------------

PROBES = {
    "a href": ("a-href", "href", PAYLOAD.format("probe")),
    "form action": ("form-action", "action", PAYLOAD.format("probe")),
    "button formaction": ("button-formaction", "formaction", PAYLOAD.format("probe")),
    "iframe src": ("iframe-src", "src", PAYLOAD.format("probe")),
    "svg a href": ("svg-href", "href", PAYLOAD.format("probe")),
    "onclick": ("div-onclick", "onclick", "window.top.pwned='probe'"),
    "script src": ("script-src", "src", "/t/pwn.js"),
    "iframe srcdoc": ("iframe-srcdoc", "srcdoc", "<script src='/t/pwn.js'></script>"),
}


@pytest.mark.parametrize("element_id, name, value", PROBES.values(), ids=PROBES.keys())
def test_the_probe_sees_script_run(unguarded, server, element_id, name, value):
    """With the page's CSP bypassed, the value set directly (not by livebind.js) runs within SETTLE_MS.

    (<object data> has no probe: the server's frame-ancestors 'none' keeps any same-origin page out of
    it, and Chromium runs no javascript: URL there; it is refused as policy, like <embed src>.)
    """
    open_attack(unguarded, server)
    unguarded.execute_script(
        FIND + "el.removeAttribute('data-lb-attr'); el.setAttribute(arguments[1], arguments[2]);",
        element_id, name, value)
    fire(unguarded, element_id)
    assert pwned_after_settling(unguarded) is not None


def test_the_probe_sees_script_text_run(unguarded, server):
    """Text put in an empty <script> runs: the reason data-lb-text refuses it."""
    open_attack(unguarded, server)
    unguarded.execute_script(
        "const s = document.createElement('script'); document.body.append(s); s.textContent = arguments[0];",
        "window.top.pwned='script text'")
    assert pwned_after_settling(unguarded) == "script text"


def test_the_probe_sees_meta_refresh_navigate(unguarded, server):
    """Changing content of <meta http-equiv=refresh> navigates: the reason <meta> is never bound."""
    open_attack(unguarded, server)
    target = server.base + "/t/text.html"
    unguarded.execute_script(
        "const m = document.getElementById('meta-content'); m.removeAttribute('data-lb-attr');"
        "m.setAttribute('content', '0;url=' + arguments[0]);", target)
    wait(unguarded, lambda d: d.current_url == target, "the refresh did not navigate")


def test_the_probe_sees_an_animation_retarget_a_link(unguarded, server):
    """<set attributeName="href" to="…"> gives a link a URL no check saw: the reason `to` is never bound."""
    open_attack(unguarded, server)
    value = "data:text/plain,animated"
    unguarded.execute_script(FIND + "el.removeAttribute('data-lb-attr'); el.setAttribute('to', arguments[1]);",
                             "set-to", value)
    wait(unguarded, lambda d: d.execute_script("return document.getElementById('svg-to').href.animVal") == value,
         "the animation did not change the link")
