"""What a newcomer sees first, at three widths: the dashboard and the examples on `--demo`, with no
element drawn over another's box (the greenhouse chart once covered its "Alarm above" field).

Two visible elements overlap when their boxes intersect by more than a pixel each way and neither holds
the other. An SVG counts as one box (its parts are drawn over each other on purpose); a screenshot of
each page and width is kept in artifacts/ for a person to look at."""
import pytest

from conftest import ARTIFACTS, Server, open_page, wait

WIDTHS = [390, 900, 1400]
PAGES = ["/", "/examples/greenhouse.html"]

# The boxes of the page's visible elements, and the pairs that overlap: described as tag#id.class.
OVERLAPS = """
const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
  + (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
const boxes = [];
for (const e of document.body.querySelectorAll('*')) {
  if (e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue;
  if (['script', 'style', 'br', 'option'].includes(e.tagName.toLowerCase())) continue;
  const style = getComputedStyle(e);
  if (style.visibility !== 'visible' || style.display === 'contents' || Number(style.opacity) === 0) continue;
  const r = e.getBoundingClientRect();
  if (r.width < 2 || r.height < 2) continue;
  // Scrolled out of a container that clips: not drawn where its box says.
  let clipped = false;
  for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
    const ps = getComputedStyle(p);
    if (ps.overflow !== 'visible') {
      const pr = p.getBoundingClientRect();
      if (r.right <= pr.left || r.left >= pr.right || r.bottom <= pr.top || r.top >= pr.bottom) { clipped = true; break; }
    }
  }
  if (!clipped) boxes.push([e, r]);
}
const found = [];
for (let i = 0; i < boxes.length && found.length < 10; i++) {
  const [a, ra] = boxes[i];
  for (let j = i + 1; j < boxes.length; j++) {
    const [b, rb] = boxes[j];
    if (a.contains(b) || b.contains(a)) continue;
    const x = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
    const y = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
    if (x > 1 && y > 1) { found.push(`${name(a)} over ${name(b)} (${Math.round(x)}×${Math.round(y)} px)`); break; }
  }
}
return found;
"""


@pytest.fixture(scope="module")
def demo(public_dir, tmp_path_factory):
    server = Server(public_dir, extra=["--demo", "--data", str(tmp_path_factory.mktemp("demo") / "data")]).start()
    yield server
    server.stop()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_no_element_is_drawn_over_another(browser, demo, path, width):
    browser.set_window_size(width, 900)
    try:
        open_page(browser, demo.base, path)
        # Live values, lists and charts drawn: the page's own layout, not its first paint.
        wait(browser, lambda d: d.execute_script(
            "return [...document.querySelectorAll('[data-lb-chart]')].every(c => c.querySelector('svg'))"),
            "a chart was not drawn")
        browser.execute_script("return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        overlaps = browser.execute_script(OVERLAPS)
        browser.save_screenshot(str(ARTIFACTS / f"layout{path.replace('/', '-').replace('.html', '') or '-index'}-{width}.png"))
        assert overlaps == [], f"{path} at {width} px: {overlaps}"
    finally:
        browser.set_window_size(1280, 900)
