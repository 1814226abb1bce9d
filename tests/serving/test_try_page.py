"""The try-it page at ``GET /`` in a real browser: what it draws is what the REST API answers.

One ``kerasformer serve`` of every kind (`tests.helpers.served`) and one headless Debian
Chromium (Playwright). Each test fills a model's form as a user would, submits it, reads
the result off the page (plotly's traces and tick labels, the marked spans' text) and
compares it with the REST answer to the same input, fetched directly. Every test also
checks that the page asked nothing of any other host and raised no script error.

``KERASFORMER_SCREENSHOTS=DIR`` saves a screenshot of each result there.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from tests.helpers.served import KINDS, ServerProcess, request_json

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
# No sandbox (containers have no user namespaces), no GPU, and none of Chromium's own
# calls home: the only requests left are the page's.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ANSWER_SECONDS = 180  # the first heatmap of a model loads its Keras model
# A character outside the BMP first: the server's offsets count characters, JavaScript's
# strings count UTF-16 units, so a page slicing by the latter marks the wrong span.
QA_CANDIDATES = [
    ("Who wrote it?", "🎉 Café: the book was written by Jane Austen in 1813."),
    ("Who won super bowl 50?", "🎉 The Denver Broncos won Super Bowl 50 on Monday."),
    ("Where did they meet?", "🎉 Angela Merkel met Emmanuel Macron in Paris."),
]
TAGGER_CANDIDATES = [
    "🙂 Mr Smith lives in Tokyo",
    "🙂 Mr Smith lives in London",
    "🙂 In Paris , Marie Curie spoke .",
    "🙂 Angela Merkel visited Paris .",
]


@pytest.fixture(scope="module")
def server(exports):
    """One server of all six exports, every one loaded before the address is printed."""
    with ServerProcess(*(f"{kind}={exports[kind]}" for kind in KINDS)) as served:
        status, described = served.request("/kerasformer/models")
        assert status == 200
        assert {model["name"]: model["version"] for model in described["models"]} == dict.fromkeys(
            KINDS, 1
        )
        yield served


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def tab(chromium, server):
    """The page in a new tab, loaded; closed after the test."""
    page = TryPage(chromium, server.url)
    yield page
    page.close()


class TryPage:
    """The try page in one browser tab, with every request it made, the ones refused, and
    every script error."""

    def __init__(self, browser, url: str):
        self.url = url
        self.context = browser.new_context(viewport={"width": 1100, "height": 900})
        self.page = self.context.new_page()
        self.requests: list = []  # Playwright's Request objects
        self.refused: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request))
        self.page.on("response", self._response)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", self._console)
        self.page.goto(url + "/")
        self.page.wait_for_selector("nav button[data-model]")

    def _response(self, response) -> None:
        if response.status >= 400:
            self.refused.append(response.url)

    def _console(self, message) -> None:
        # A refused request is logged too: `refused` holds those, to be told apart.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.errors.append(message.text)

    def submit(self, model: str, **values: str):
        """Open ``model``'s tab, fill its fields (by name), submit, and wait for the answers."""
        self.page.click(f'nav button[data-model="{model}"]')
        section = self.page.locator(f'section[data-model="{model}"]')
        for name, value in values.items():
            field = section.locator(f'[name="{name}"]')
            if field.evaluate("node => node.tagName") == "SELECT":
                field.select_option(value=value)
            else:
                field.fill(value)
        # The answer is in when the section is no longer busy: forget the last answer's state.
        section.evaluate("node => node.removeAttribute('aria-busy')")
        section.locator('button[type="submit"]').click()
        self.page.wait_for_selector(
            f'section[data-model="{model}"][aria-busy="false"]', timeout=ANSWER_SECONDS * 1000
        )
        return section

    def check_stayed_home(self, refused: tuple[str, ...] = ()) -> None:
        """Every request went to the server itself, only the paths ``refused`` were
        refused, and no script failed."""
        home = urlsplit(self.url)[:2]  # scheme and host:port
        elsewhere = [request.url for request in self.requests if urlsplit(request.url)[:2] != home]
        assert self.requests and not elsewhere, f"requests to other hosts: {elsewhere}"
        assert [urlsplit(url).path for url in self.refused] == list(refused)
        assert not self.errors, f"the page reported errors: {self.errors}"

    def sent(self, path: str) -> list:
        """The JSON bodies of the page's requests to ``path``."""
        return [
            request.post_data_json
            for request in self.requests
            if urlsplit(request.url).path == path
        ]

    def screenshot(self, name: str) -> None:
        folder = os.environ.get("KERASFORMER_SCREENSHOTS")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)

    def close(self) -> None:
        self.context.close()


def rest(server, path: str, body) -> dict:
    status, answer = request_json(server.url + path, body)
    assert status == 200, answer
    return answer


def predict(server, model: str, body) -> dict:
    return rest(server, f"/v1/models/{model}:predict", body)


def plotly_traces(plot) -> list[dict]:
    """The traces plotly drew in ``plot`` (a locator of its div)."""
    return plot.evaluate("div => JSON.parse(JSON.stringify(div.data))")


def tick_labels(plot, axis: str) -> list[str]:
    """The tick labels plotly rendered on ``axis`` ("x" or "y"), as a reader sees them."""
    return plot.evaluate(
        f"div => Array.from(div.querySelectorAll('.{axis}tick text'), text => text.textContent)"
    )


def bar_heights(plot) -> np.ndarray:
    """The rendered bars' heights in pixels, left to right."""
    boxes = [bar.bounding_box() for bar in plot.locator(".point path").all()]
    return np.array([box["height"] for box in sorted(boxes, key=lambda box: box["x"])])


def marked_spans(container, selector: str) -> list[tuple[str, str | None]]:
    """``(text, data-type)`` of each element matching ``selector``, in reading order."""
    return [
        (mark.text_content(), mark.get_attribute("data-type"))
        for mark in container.locator(selector).all()
    ]


def check_heatmap(section, maps: list[dict]) -> None:
    """The page draws the first map's first layer, all heads averaged, token by token; and
    the last layer's last head once picked."""
    heatmap = section.locator(".attention .attention-map")
    first = maps[0]
    assert section.locator('select[name="map"] option').all_text_contents() == [
        found["name"] for found in maps
    ]
    traces = plotly_traces(heatmap)
    assert [trace["type"] for trace in traces] == ["heatmap"]
    np.testing.assert_allclose(traces[0]["z"], np.mean(first["weights"][0], axis=0), atol=1e-6)
    assert tick_labels(heatmap, "x") == first["key_tokens"]
    assert tick_labels(heatmap, "y") == first["query_tokens"]
    layers, heads = len(first["weights"]), len(first["weights"][0])
    section.locator('select[name="layer"]').select_option(value=str(layers - 1))
    section.locator('select[name="head"]').select_option(value=str(heads - 1))
    [trace] = plotly_traces(heatmap)
    np.testing.assert_allclose(trace["z"], first["weights"][-1][-1], atol=1e-6)


def test_classifier_draws_class_bars_and_attention_heatmap(server, tab):
    text = "Stocks rallied as the market closed higher"
    section = tab.submit("classifier", text=text)
    tab.screenshot("classifier")

    expected = predict(server, "classifier", {"instances": [text]})["predictions"][0]
    names = predict(server, "classifier", {"signature_name": "class_names", "inputs": {}})
    bars = section.locator(".result .class-bars")
    [trace] = plotly_traces(bars)
    np.testing.assert_allclose(trace["y"], expected["probabilities"], atol=1e-7)
    assert tick_labels(bars, "x") == names["outputs"]
    heights = bar_heights(bars)
    probabilities = np.array(expected["probabilities"])
    # The same 0-to-1 scale for every bar: heights in proportion to the probabilities.
    np.testing.assert_allclose(
        heights * probabilities.max() / heights.max(),
        probabilities,
        atol=1.5 * probabilities.max() / heights.max(),
    )
    colours = trace["marker"]["color"]
    predicted = names["outputs"].index(expected["predicted_class"])
    assert [colour == colours[predicted] for colour in colours].count(True) == 1
    assert expected["predicted_class"] in section.locator(".result .summary").inner_text()

    maps = rest(server, "/kerasformer/models/classifier/attention", {"text": text})["maps"]
    check_heatmap(section, maps)
    tab.check_stayed_home()


def test_multi_label_classifier_marks_every_label_over_its_threshold(server, tab):
    text = "how do I parse json in python"
    section = tab.submit("multi_label", text=text)
    tab.screenshot("multi_label")

    expected = predict(server, "multi_label", {"instances": [text]})["predictions"][0]
    [trace] = plotly_traces(section.locator(".result .class-bars"))
    np.testing.assert_allclose(trace["y"], expected["probabilities"], atol=1e-7)
    colours = trace["marker"]["color"]
    over = expected["over_threshold"]
    # Two bars share a colour exactly when both are over the threshold or both under.
    assert all(
        (colours[i] == colours[j]) == (over[i] == over[j])
        for i in range(len(over))
        for j in range(len(over))
    )
    summary = section.locator(".result .summary").inner_text()
    assert all(label in summary for label in expected["labels"].split(",") if label)
    tab.check_stayed_home()


def test_translator_shows_greedy_and_beam_search_translations(server, tab):
    text = "Where is the station?"
    for signature in ("serving_default", "beam_search"):
        decoding = "beam_search" if signature == "beam_search" else "greedy"
        section = tab.submit("translator", text=text, decoding=decoding)
        tab.screenshot(f"translator-{decoding}")
        expected = predict(server, "translator", {"signature_name": signature, "instances": [text]})
        assert section.locator(".result .translation").text_content() == expected["predictions"][0]

    maps = rest(server, "/kerasformer/models/translator/attention", {"text": text})["maps"]
    check_heatmap(section, maps)
    tab.check_stayed_home()


def test_language_model_shows_the_continuation_and_the_settings_it_was_sampled_with(server, tab):
    prompt = "The cat"
    # Temperature 0 is greedy: the page's continuation and the REST one must agree.
    section = tab.submit("language_model", prompt=prompt, temperature="0", top_k="5", top_p="0.5")
    tab.screenshot("language_model")

    settings = {"temperature": 0, "top_k": 5, "top_p": 0.5}
    body = {"signature_name": "sample", "inputs": {"inputs": [prompt], **settings}}
    assert tab.sent("/v1/models/language_model:predict") == [body]
    expected = predict(server, "language_model", body)
    assert section.locator(".result .prompt").text_content() == prompt
    assert section.locator(".result .continuation").text_content() == expected["outputs"][0]
    shown = section.locator(".result .settings").inner_text()
    assert all(
        f"{name} {value}" in shown
        for name, value in (("temperature", 0), ("top-k", 5), ("top-p", 0.5))
    )
    maps = rest(server, "/kerasformer/models/language_model/attention", {"text": prompt})["maps"]
    check_heatmap(section, maps)
    tab.check_stayed_home()


def test_question_answerer_marks_the_answer_in_its_context(server, tab):
    question, context, expected = first_answered(server)
    section = tab.submit("question_answerer", question=question, context=context)
    tab.screenshot("question_answerer")

    marked = section.locator(".result .marked")
    assert marked.text_content() == context
    assert marked_spans(marked, "mark") == [(expected["answer"], None)]
    assert marked.evaluate("p => p.firstChild.textContent") == context[: expected["start"]]
    maps = rest(
        server,
        "/kerasformer/models/question_answerer/attention",
        {"text": question, "context": context},
    )["maps"]
    check_heatmap(section, maps)
    tab.check_stayed_home()


def first_answered(server) -> tuple[str, str, dict]:
    """The first candidate question the tiny model answers, with its context and answer."""
    for question, context in QA_CANDIDATES:
        instance = {"question": question, "context": context}
        found = predict(server, "question_answerer", {"instances": [instance]})["predictions"][0]
        if found["answer"]:
            return question, context, found
    raise AssertionError(f"the tiny question answerer answered none of {QA_CANDIDATES}")


def test_tagger_marks_each_entity_with_its_type(server, tab):
    text, expected = most_entities(server)
    section = tab.submit("tagger", text=text)
    tab.screenshot("tagger")

    marked = section.locator(".result .marked")
    count = expected["entity_counts"]
    assert marked.text_content() == text
    assert marked_spans(marked, "mark") == list(
        zip(expected["entity_texts"][:count], expected["entity_types"][:count], strict=True)
    )
    legend = section.locator(".result .legend span").all_text_contents()
    assert legend == sorted(set(expected["entity_types"][:count]))
    # Taggers have no attention view: the page does not ask for one.
    assert tab.sent("/kerasformer/models/tagger/attention") == []
    tab.check_stayed_home()


def most_entities(server) -> tuple[str, dict]:
    """The candidate text in which the tiny tagger finds the most entities, and its answer."""
    answers = predict(server, "tagger", {"instances": TAGGER_CANDIDATES})["predictions"]
    text, answer = max(
        zip(TAGGER_CANDIDATES, answers, strict=True), key=lambda pair: pair[1]["entity_counts"]
    )
    assert answer["entity_counts"] > 0, f"the tiny tagger found no entity in {TAGGER_CANDIDATES}"
    # The page asks for the text alone: compare with the answer to that same request.
    return text, predict(server, "tagger", {"instances": [text]})["predictions"][0]


def test_server_errors_are_shown_on_the_page(server, tab):
    question = "Who wrote it?"
    section = tab.submit("question_answerer", question=question, context="")
    tab.screenshot("error")

    status, refused = request_json(
        server.url + "/kerasformer/models/question_answerer/attention",
        {"text": question, "context": ""},
    )
    assert status == 400
    assert section.locator(".attention .error").inner_text() == refused["error"]
    expected = predict(
        server, "question_answerer", {"instances": [{"question": question, "context": ""}]}
    )
    assert expected["predictions"][0]["start"] < 0
    assert section.locator(".result mark").count() == 0
    tab.check_stayed_home(refused=("/kerasformer/models/question_answerer/attention",))
