"""The labs in JupyterLab and Voila in a real browser, as a student and a presenter use them.

What only a browser can show is checked here: the panel's widgets render in JupyterLab; a slider
moved with the keyboard, a value typed into a box, a dropdown (where the panel has one) redraw the
figure, or the status says truthfully that the figure is the same; a value outside the slider's range
typed into a box is refused, named, and the control goes back; Run All leaves no cell unrun and no
error or warning output with the panels on; a lab renders as a Voila dashboard (``make demo``) with
prose, panel and figure and no code, and its figure redraws when a presenter moves a slider. Redraw
times and screenshots go to ``reports/browser/`` (see conftest.py); the run's summary prints the report.

Which labs. The widgets are the same few ipywidgets on every lab's panel (ConfigPanel builds an int or
a float slider with a box, a dropdown, a checkbox or a text box from the config's fields), so
JupyterLab runs the labs in :data:`LAB_RUN_ALL`, which between them type a value into an int and a
float slider's box, refuse one typed into an int and a float slider, change a dropdown and show a
page with two panels; Voila renders the lab(s) in :data:`DASHBOARDS`. What the other labs would add is checked
elsewhere, without a browser:

- every cell but the panel cells runs headless at both presets with no error and nothing on stderr,
  and every figure shows (tests/notebooks/test_notebooks.py, which also checks that ``interactive``,
  the one parameter Run All sets differently, is read by the panel cells only);
- every lab's panel cells run with ``interactive=True`` and every panel's controls are moved (a re-run
  and a redraw, or a refusal naming the control) with no warning (tests/notebooks/test_panels.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .conftest import REPORT_DIR

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
#: Run All in JupyterLab. Each lab's first panel gets a value typed into its last slider's box and one
#: refused on its first slider: the tour types a float (mean_task_duration), refuses an int (machines)
#: and changes its placement dropdown; Lab 01 types an int (max_vertices), refuses a float (progress),
#: has no dropdown, and holds two panels on one page. Every other lab's first panel is one of these cases.
LAB_RUN_ALL = ["00_cluster_sim_tour.ipynb", "01_plan_aware_shaper.ipynb"]
#: as a workshop dashboard in Voila: the tour, what `make demo` shows by default (Voila renders every lab's
#: panel with the same widgets; a second lab adds no kind of control, only another chance of Voila's stall
#: that costs a reload, see the test)
DASHBOARDS = ["00_cluster_sim_tour.ipynb"]
RUN_ALL_TIMEOUT = 600  # seconds for one notebook's Run All (papermill takes well under a minute each)
DASHBOARD_TIMEOUT = 180  # seconds for Voila to render one lab (it runs the notebook first; 30-60 s seen)
STUCK_AFTER = 90  # seconds after which a first render is taken as Voila's stall and reloaded (see the test)
REDRAW_TIMEOUT = 60

pytestmark = [pytest.mark.notebook, pytest.mark.xdist_group("browser")]


@pytest.fixture
def page(browser, lab_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()
    _shut_down_kernels(lab_server[0])


def _shut_down_kernels(base: str) -> None:
    """One notebook's kernel at a time: six idle kernels would hold gigabytes."""
    import json
    import urllib.request

    for kernel in json.load(urllib.request.urlopen(f"{base}/api/kernels", timeout=10)):
        req = urllib.request.Request(f"{base}/api/kernels/{kernel['id']}", method="DELETE")
        urllib.request.urlopen(req, timeout=30)


def open_notebook(page, base: str, name: str) -> None:
    # a workspace of its own, reset: JupyterLab would otherwise reopen the previous test's tabs
    page.goto(f"{base}/lab/workspaces/{name.split('_')[0]}/tree/notebooks/{name}?reset")
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=90_000)
    # the kernel is connected when the status bar names it and says Idle (before that, Run All
    # walks through the cells without running them)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]"
        ".some(e => /cluster_sim\\) \\| Idle/.test(e.textContent))", timeout=90_000, polling=250)


def run_all(page) -> float:
    t0 = time.perf_counter()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_timeout(1000)
    # done when no cell is queued or running, twice in a row (an error stops the queue)
    page.wait_for_function(
        """() => {
            const running = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                .some(p => p.textContent.includes('*'));
            window.__csIdle = running ? 0 : (window.__csIdle || 0) + 1;
            return window.__csIdle >= 3;
        }""", timeout=RUN_ALL_TIMEOUT * 1000, polling=500)
    return time.perf_counter() - t0


def problems(page) -> list[str]:
    """Cells that did not run, error outputs and warnings a student would see."""
    return page.evaluate(
        """() => {
            const out = [];
            document.querySelectorAll('.jp-CodeCell').forEach((cell, i) => {
                const prompt = cell.querySelector('.jp-InputPrompt').textContent;
                if (!/\\[\\d+\\]/.test(prompt)) out.push(`code cell ${i} did not run (${prompt.trim()})`);
                cell.querySelectorAll('[data-mime-type="application/vnd.jupyter.error"]').forEach(e =>
                    out.push(`code cell ${i} error: ${e.textContent.slice(0, 300)}`));
                cell.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]').forEach(e =>
                    out.push(`code cell ${i} stderr: ${e.textContent.slice(0, 300)}`));
            });
            return out;
        }""")


class Panel:
    """The first ConfigPanel on the page, read and driven through its DOM."""

    def __init__(self, page, locator):
        self.page, self.root = page, locator

    def image(self) -> str | None:
        img = self.root.locator(".cs-figure img")
        return img.first.get_attribute("src") if img.count() else None

    def status(self) -> str:
        return self.root.locator(".cs-status").inner_text()

    def field(self, name: str):
        return self.root.locator(f".cs-field-{name}")

    def fields(self) -> list[str]:
        classes = self.root.locator(".cs-field").evaluate_all("els => els.map(e => e.className)")
        return [next(c[len("cs-field-"):] for c in cls.split() if c.startswith("cs-field-")) for cls in classes]

    def box_value(self, name: str) -> str:
        return self.field(name).locator("input[type=text]").input_value()

    def wait_for_status(self, needle: str, before: str) -> float:
        """Seconds until the status line has changed from ``before`` and contains ``needle``."""
        t0 = time.perf_counter()
        self.page.wait_for_function(
            "([el, needle, before]) => el.innerText !== before && el.innerText.includes(needle)"
            " && !el.innerText.includes('running')",
            arg=[self.root.locator(".cs-status").element_handle(), needle, before],
            timeout=REDRAW_TIMEOUT * 1000)
        return time.perf_counter() - t0


def check_redraw(panel: Panel, name: str, act, label: str, shots: Path, report, notebook: str) -> str:
    """Do ``act``; the panel must re-run with ``name`` and redraw, or say the figure is the same."""
    image, status = panel.image(), panel.status()
    act()
    seconds = panel.wait_for_status(f"with {name} = ", status)
    new_status = panel.status()
    assert "re-ran in" in new_status, f"{notebook}: {label} on {name}: status {new_status!r}"
    if "exactly the same" not in new_status:  # the panel sends the figure before the status
        panel.page.wait_for_function("([el, old]) => { const i = el.querySelector('img'); return i && i.src !== old; }",
                                     arg=[panel.root.locator(".cs-figure").element_handle(), image], timeout=5000)
    changed = panel.image() != image
    assert changed or "exactly the same" in new_status, (
        f"{notebook}: {label} on {name} re-ran but the image did not change and the status does not say so")
    panel.root.screenshot(path=str(shots / f"{notebook[:2]}-{label.replace(' ', '_')}-{name}.png"))
    outcome = "redrawn" if changed else "same figure, said so"
    report(notebook, label, name, seconds, outcome)
    return outcome


def test_the_browser_labs_are_labs_with_a_panel():
    for name in LAB_RUN_ALL + DASHBOARDS:
        assert name in NOTEBOOKS and "ConfigPanel(" in (ROOT / "notebooks" / name).read_text(), name


@pytest.mark.parametrize("notebook", LAB_RUN_ALL)
def test_notebook_runs_and_its_panel_answers(page, lab_server, report, notebook):
    base, _ = lab_server
    shots = REPORT_DIR
    shots.mkdir(parents=True, exist_ok=True)
    open_notebook(page, base, notebook)
    seconds = run_all(page)
    found = problems(page)
    page.screenshot(path=str(shots / f"{notebook[:2]}-run-all.png"))
    report(notebook, "Run All", "", seconds, "clean" if not found else f"{len(found)} problems")
    assert not found, f"{notebook}: " + "\n".join(found)

    panels = page.locator(".cs-panel")
    if "ConfigPanel(" not in (ROOT / "notebooks" / notebook).read_text():
        return
    assert panels.count() >= 1, f"{notebook}: the panel did not render"
    panel = Panel(page, panels.first)
    assert panel.image(), f"{notebook}: the panel shows no figure"
    names = panel.fields()

    # a slider moved with the keyboard (the first whose step changes the figure)
    sliders = [n for n in names if panel.field(n).locator(".noUi-handle").count()]
    assert sliders, f"{notebook}: the panel has no slider"
    for name in sliders:
        handle = panel.field(name).locator(".noUi-handle")
        at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
        key = "ArrowLeft" if at_max else "ArrowRight"
        handle.focus()
        if check_redraw(panel, name, lambda: panel.page.keyboard.press(key), "slider key", shots, report,
                        notebook) == "redrawn":
            break
    else:
        pytest.fail(f"{notebook}: no slider step changed the figure")

    # a value typed into a slider's box
    name = sliders[-1]
    handle = panel.field(name).locator(".noUi-handle")
    lo, hi = float(handle.get_attribute("aria-valuemin")), float(handle.get_attribute("aria-valuemax"))
    current = float(panel.box_value(name))
    target = lo if current != lo else hi
    text = f"{int(target)}" if target.is_integer() else f"{target:g}"
    box = panel.field(name).locator("input[type=text]")
    check_redraw(panel, name, lambda: (box.fill(text), box.press("Enter")), "typed value", shots, report, notebook)
    assert float(panel.box_value(name)) == target
    assert float(handle.get_attribute("aria-valuenow")) == pytest.approx(target)

    # a dropdown, and a free text box, where the panel has them
    dropdowns = [n for n in names if panel.field(n).locator("select").count()]
    if dropdowns:
        name = dropdowns[0]
        select = panel.field(name).locator("select")
        options = select.locator("option").evaluate_all("os => os.map(o => o.value)")
        nxt = options[(options.index(select.input_value()) + 1) % len(options)]
        check_redraw(panel, name, lambda: select.select_option(nxt), "dropdown", shots, report, notebook)
    else:
        report(notebook, "dropdown", "", None, "none on this panel")

    # a value beyond the slider typed into its box: refused, named, the control goes back
    name = sliders[0]
    handle = panel.field(name).locator(".noUi-handle")
    before_box, before_handle = panel.box_value(name), handle.get_attribute("aria-valuenow")
    hi = float(handle.get_attribute("aria-valuemax"))
    rejected = f"{int(hi) + 1000}" if hi.is_integer() else f"{hi * 10 + 1:g}"
    status = panel.status()
    box = panel.field(name).locator("input[type=text]")
    t0 = time.perf_counter()
    box.fill(rejected)
    box.press("Enter")
    panel.wait_for_status(f"{name} = {rejected} was refused", status)
    page.wait_for_function("([el, v]) => el.value === v",
                           arg=[box.element_handle(), before_box], timeout=REDRAW_TIMEOUT * 1000)
    seconds = time.perf_counter() - t0
    assert handle.get_attribute("aria-valuenow") == before_handle
    panel.root.screenshot(path=str(shots / f"{notebook[:2]}-rejected-{name}.png"))
    report(notebook, f"rejected {rejected}", name, seconds, "refused, named, control reset")


@pytest.mark.parametrize("notebook", DASHBOARDS)
def test_a_lab_as_a_workshop_dashboard(browser, voila_server, report, notebook):
    """`make demo LAB=NN` mode: Voila renders prose, panels and figures with the code hidden; a
    presenter moves a control and the figure redraws."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        # Voila renders the whole notebook before the page loads (papermill: under a minute), then the
        # panel's figure arrives over the kernel's websocket. Under load, in a full `make test`, lab 02's
        # page twice never showed its figure (once the page never loaded), though it renders in 30 s
        # alone: a kernel or websocket that never came up. Reload once with a fresh kernel, and say so.
        # Seen since on 3 of the 10 dashboards of one run and on half of the tour's renders: the page stays
        # at "Executing N of M" on the panel cell (like voila-dashboards/voila#1428), while a render that
        # goes through takes 9-64 s on the loaded 2-core machine; so the first attempt gives up sooner.
        for attempt, timeout in ((1, STUCK_AFTER), (2, DASHBOARD_TIMEOUT)):
            t0 = time.perf_counter()
            try:
                response = page.goto(f"{voila_server}/voila/render/{notebook}", timeout=timeout * 1000)
                assert response is not None and response.ok, f"{notebook}: Voila answered {response and response.status}"
                page.wait_for_selector(".cs-panel .cs-figure img", timeout=timeout * 1000)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
                page.screenshot(path=str(REPORT_DIR / f"{notebook[:2]}-dashboard-stuck.png"))
                report(notebook, "dashboard (Voila)", "", time.perf_counter() - t0, "no figure: reloaded once")
        report(notebook, "dashboard (Voila)", "", time.perf_counter() - t0, "rendered")
        code = page.locator(".jp-CodeCell .jp-InputArea, .cm-editor, .CodeMirror")
        assert not any(code.nth(i).is_visible() for i in range(code.count())), f"{notebook}: the dashboard shows code"
        assert page.locator(".jp-MarkdownCell").count() > 0, f"{notebook}: the dashboard shows no prose"
        errors = page.locator("[data-mime-type='application/vnd.jupyter.error'], .jp-OutputArea-output.jp-mod-error")
        assert errors.count() == 0, f"{notebook}: the dashboard shows an error: {errors.first.inner_text()[:300]}"
        panel = Panel(page, page.locator(".cs-panel").first)
        for name in [n for n in panel.fields() if panel.field(n).locator(".noUi-handle").count()]:
            handle = panel.field(name).locator(".noUi-handle")
            key = "ArrowLeft" if handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax") \
                else "ArrowRight"
            handle.focus()
            if check_redraw(panel, name, lambda: page.keyboard.press(key), "dashboard slider", REPORT_DIR, report,
                            notebook) == "redrawn":
                break
        else:
            pytest.fail(f"{notebook}: no slider step changed the figure on the dashboard")
    finally:
        context.close()
