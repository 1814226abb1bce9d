"""The page at ``GET /`` of ``kerasformer serve``: try each served model in a browser.

One HTML page (`PAGE`, with its CSS and JavaScript) reads ``/kerasformer/models`` and
gives each served model a tab with the form its kind needs. A submitted form calls the
same REST API as any client (``POST /v1/models/NAME:predict``) and draws the answer:
a classifier's class bars, a translation, generated text with its sampling settings, the
answer marked in its context, the entities marked by type. Beside it, the heatmap of the
input's attention (``POST /kerasformer/models/NAME/attention``, every kind but taggers),
with a map, layer and head picker. Pictures are drawn by plotly.js, served by this server
(``/kerasformer/plotly.min.js``): the page fetches nothing from any other host.

Model and user text reaches the page only as DOM text nodes, attributes set one by one,
or plotly labels with their markup escaped, never as HTML to parse.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from kerasformer.errors import KerasformerError
from kerasformer.serving.rest_format import BadRequest

# Keras models are loaded once per export, on the first heatmap asked of it.
_ATTENTION_LOCK = threading.Lock()
# Kinds whose attention reads one text: a "context" is refused rather than ignored.
ONE_TEXT_KINDS = ("translator", "language-model")

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<!-- Only this server: scripts, requests and pictures from anywhere else are refused. -->
<meta http-equiv="Content-Security-Policy" content="default-src 'self';
  script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline';
  img-src 'self' data: blob:; font-src 'self' data:">
<link rel="icon" href="data:,">
<title>kerasformer serve</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 64rem;
         padding: 0 1rem 3rem; color: #1d2329; }
  nav { display: flex; flex-wrap: wrap; gap: .25rem; border-bottom: 1px solid #c8d0d8; }
  nav button { border: 1px solid #c8d0d8; border-bottom: none; background: #f3f5f7;
               padding: .4rem .8rem; border-radius: .4rem .4rem 0 0; cursor: pointer; }
  nav button[aria-selected="true"] { background: white; font-weight: 600;
                                     margin-bottom: -1px; padding-bottom: calc(.4rem + 1px); }
  .about, .note, .settings { color: #5b6670; font-size: .9rem; }
  form { display: grid; gap: .6rem; max-width: 44rem; }
  label { display: grid; gap: .2rem; font-weight: 600; }
  textarea, input, select { font: inherit; font-weight: normal; padding: .3rem; }
  label > select { justify-self: start; }
  .numbers { display: flex; gap: 1rem; } .numbers label { flex: 1; }
  form button { justify-self: start; font: inherit; padding: .3rem 1.2rem; }
  .error { color: #a61b1b; background: #fdecec; padding: .5rem; border-radius: .3rem;
           white-space: pre-wrap; }
  .translation, .generated, .marked { font-size: 1.2rem; white-space: pre-wrap;
           background: #f6f8fa; padding: .8rem; border-radius: .3rem; }
  .continuation { background: #fff1b8; }
  mark.answer { background: #b7eb8f; padding: 0 .1rem; }
  mark.entity { padding: 0 .15rem; border-radius: .2rem; }
  mark.entity::after { content: " " attr(data-type); font-size: .7em; font-weight: 700; }
  .legend span { display: inline-block; margin-right: .8rem; padding: 0 .3rem; }
  .pickers { display: flex; flex-wrap: wrap; gap: 1rem; margin: .5rem 0; }
  .pickers label { font-weight: normal; }
</style>
<script src="kerasformer/plotly.min.js"></script>
</head>
<body>
<h1>kerasformer serve</h1>
<p class="note">Each tab calls this server's REST API, <code>POST /v1/models/NAME:predict</code>,
as any client would.</p>
<nav role="tablist"></nav>
<main></main>
<script>
"use strict";

// --- small helpers -------------------------------------------------------------------

/** A new element; strings among the children become text nodes, never parsed HTML. */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** plotly reads a few HTML tags in its labels: escape them so text shows as it is. */
function plotlyText(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The JSON answer of a GET (no body) or a POST; the server's {"error"} is thrown. */
async function call(path, body) {
  const request = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  const response = await fetch(path, request);
  const answer = await response.json().catch(() => ({}));
  if (!response.ok || answer.error !== undefined) {
    throw new Error(answer.error || `HTTP ${response.status} ${response.statusText}`);
  }
  return answer;
}

const modelPath = (model) => `v1/models/${encodeURIComponent(model.name)}`;
const predict = (model, body) => call(`${modelPath(model)}:predict`, body);

/** The server's offsets count Unicode characters; JavaScript strings count UTF-16 units. */
const characters = (text) => Array.from(text);
const slice = (chars, start, end) => chars.slice(start, end).join("");

function errorBox(error) {
  return el("p", {class: "error", role: "alert"}, String(error.message || error));
}

// --- what each kind asks for and shows ----------------------------------------------

const FIELDS = {
  text: {label: "Text", tag: "textarea", rows: 3},
  prompt: {label: "Prompt", tag: "textarea", rows: 2},
  question: {label: "Question", tag: "input"},
  context: {label: "Context", tag: "textarea", rows: 6},
  temperature: {label: "Temperature (0: greedy)", type: "number", value: 0.7, min: 0,
                step: 0.1},
  top_k: {label: "Top-k (0: no limit)", type: "number", value: 40, min: 0, step: 1},
  top_p: {label: "Top-p (1: no limit)", type: "number", value: 0.9, min: 0, max: 1,
          step: 0.05},
};

const KINDS = {
  "classifier": {
    fields: ["text"], button: "Classify",
    attention: (values) => ({text: values.text}),
    async show(model, values, output) {
      const [answer, names] = await Promise.all([
        predict(model, {instances: [values.text]}), classNames(model)]);
      const prediction = answer.predictions[0];
      const chosen = prediction.over_threshold
        || names.map((name) => name === prediction.predicted_class);
      const summary = prediction.labels !== undefined
        ? `Labels over the threshold: ${prediction.labels.split(",").join(", ") || "none"}`
        : `Predicted class: ${prediction.predicted_class}`;
      const bars = el("div", {class: "class-bars"});
      output.replaceChildren(el("p", {class: "summary"}, summary), bars,
                    el("p", {class: "note"}, `${prediction.known_tokens} known tokens`));
      drawBars(bars, names, prediction.probabilities, chosen);
    },
  },
  "translator": {
    fields: ["text"], button: "Translate",
    attention: (values) => ({text: values.text}),
    extraFields: (model) => model.signatures.beam_search ? [decodingPicker()] : [],
    async show(model, values, output) {
      const body = {instances: [values.text]};
      if (values.decoding === "beam_search") body.signature_name = "beam_search";
      const answer = await predict(model, body);
      const decoding = values.decoding === "beam_search" ? "beam search" : "greedy";
      output.replaceChildren(el("p", {class: "translation"}, answer.predictions[0]),
                    el("p", {class: "settings"}, `${decoding} decoding`));
      if (!answer.predictions[0]) output.append(el("p", {class: "note"}, "An empty translation."));
    },
  },
  "language-model": {
    fields: ["prompt", ["temperature", "top_k", "top_p"]], button: "Generate",
    attention: (values) => ({text: values.prompt}),
    async show(model, values, output) {
      const settings = {temperature: Number(values.temperature), top_k: Number(values.top_k),
                        top_p: Number(values.top_p)};
      const answer = await predict(model, {
        signature_name: "sample", inputs: {inputs: [values.prompt], ...settings}});
      const continuation = answer.outputs[0];
      output.replaceChildren(
        el("p", {class: "generated"}, el("span", {class: "prompt"}, values.prompt), " ",
           el("span", {class: "continuation"}, continuation)),
        el("p", {class: "settings"}, samplingSettings(settings)));
      if (!continuation) output.append(el("p", {class: "note"}, "The model ended the text."));
    },
  },
  "question answerer": {
    fields: ["question", "context"], button: "Answer",
    attention: (values) => ({text: values.question, context: values.context}),
    async show(model, values, output) {
      const answer = await predict(model, {
        instances: [{question: values.question, context: values.context}]});
      const found = answer.predictions[0];
      const scores = `score ${found.score.toFixed(3)}, no-answer score `
        + found.no_answer_score.toFixed(3);
      if (found.start < 0 || found.end <= found.start) {
        output.replaceChildren(el("p", {class: "summary"}, `No answer found (${scores}).`));
        return;
      }
      const chars = characters(values.context);
      output.replaceChildren(
        el("p", {class: "summary"}, `Answer: ${found.answer} (${scores})`),
        el("p", {class: "marked"}, slice(chars, 0, found.start),
           el("mark", {class: "answer"}, slice(chars, found.start, found.end)),
           slice(chars, found.end)));
    },
  },
  "tagger": {
    fields: ["text"], button: "Tag",
    attention: null,  // taggers have no attention view
    async show(model, values, output) {
      const answer = await predict(model, {instances: [values.text]});
      output.replaceChildren(...markedEntities(values.text, answer.predictions[0]));
    },
  },
};

/** A model kerasformer cannot name: the request's JSON as typed, the answer as JSON. */
const RAW_KIND = {
  fields: [], button: "Send", attention: null,
  extraFields: () => [el("label", {}, "Request body (JSON)", el("textarea", {
    name: "body", rows: 6}, '{"instances": []}'))],
  async show(model, values, output) {
    const answer = await predict(model, JSON.parse(values.body));
    output.replaceChildren(el("pre", {}, JSON.stringify(answer, null, 2)));
  },
};

function decodingPicker() {
  const select = el("select", {name: "decoding"});
  select.append(new Option("greedy", "greedy"), new Option("beam search", "beam_search"));
  return el("label", {}, "Decoding", select);
}

function samplingSettings({temperature, top_k, top_p}) {
  const parts = [temperature === 0 ? "temperature 0 (greedy)" : `temperature ${temperature}`,
                 top_k === 0 ? "top-k 0 (no limit)" : `top-k ${top_k}`,
                 top_p >= 1 ? `top-p ${top_p} (no limit)` : `top-p ${top_p}`];
  return `Sampled with ${parts.join(", ")}`;
}

const classNamesOf = new Map();  // model name -> promise of its class names

function classNames(model) {
  if (!classNamesOf.has(model.name)) {
    const names = predict(model, {signature_name: "class_names", inputs: {}})
      .then((answer) => answer.outputs);
    names.catch(() => classNamesOf.delete(model.name));  // ask again next time
    classNamesOf.set(model.name, names);
  }
  return classNamesOf.get(model.name);
}

const ENTITY_COLOURS = ["#ffd591", "#91d5ff", "#b7eb8f", "#ffadd2", "#d3adf7", "#87e8de",
                        "#ffe58f", "#ffbb96"];

/** The text with each entity marked in its type's colour, and a legend of the types. */
function markedEntities(text, prediction) {
  const count = prediction.entity_counts;  // the lists may be padded past it
  const entities = prediction.entity_starts.slice(0, count).map((start, index) => ({
    start, end: prediction.entity_ends[index], type: prediction.entity_types[index]}));
  entities.sort((a, b) => a.start - b.start);
  const types = [...new Set(entities.map((entity) => entity.type))].sort();
  const colour = (type) => ENTITY_COLOURS[types.indexOf(type) % ENTITY_COLOURS.length];
  const chars = characters(text);
  const marked = el("p", {class: "marked"});
  let done = 0;
  for (const {start, end, type} of entities) {
    if (start < done) continue;  // overlaps the one before
    const mark = el("mark", {class: "entity", "data-type": type}, slice(chars, start, end));
    mark.style.background = colour(type);
    marked.append(slice(chars, done, start), mark);
    done = end;
  }
  marked.append(slice(chars, done));
  if (!entities.length) return [el("p", {class: "summary"}, "No entities found."), marked];
  const legend = el("p", {class: "legend"}, ...types.map((type) => {
    const swatch = el("span", {}, type);
    swatch.style.background = colour(type);
    return swatch;
  }));
  return [el("p", {class: "summary"}, `${entities.length} entities found.`), marked, legend];
}

// --- pictures --------------------------------------------------------------------------

const PLOT_CONFIG = {displaylogo: false, responsive: true};

function drawBars(plot, names, probabilities, chosen) {
  Plotly.react(plot, [{
    type: "bar", x: names.map(plotlyText), y: probabilities,
    marker: {color: chosen.map((on) => on ? "#d4380d" : "#8c9aa8")},
    text: probabilities.map((p) => p.toFixed(3)), textposition: "outside",
    hovertemplate: "%{x}: %{y:.4f}<extra></extra>",
  }], {
    // "category": class names such as "1" and "2" are names, not numbers.
    xaxis: {type: "category"}, yaxis: {range: [0, 1.1], title: {text: "probability"}},
    height: 320, margin: {t: 20, b: 80}, template: "plotly_white",
  }, PLOT_CONFIG);
}

/** Heatmap of one (layer, head) of ``map``, or of the mean of the layer's heads. */
function drawHeatmap(plot, map, layer, head) {
  const heads = map.weights[layer];
  const z = head === "mean"
    ? heads[0].map((row, q) => row.map((_, k) =>
      heads.reduce((sum, weights) => sum + weights[q][k], 0) / heads.length))
    : heads[head];
  const keys = map.key_tokens.map(plotlyText);
  const queries = map.query_tokens.map(plotlyText);
  const positions = (tokens) => tokens.map((_, index) => index);
  Plotly.react(plot, [{
    // Integer positions: string categories would merge repeated tokens. The colours span
    // 0 to the largest weight shown (averaged heads of a long input rarely come near 1),
    // from 0 so that attention spread evenly looks even.
    type: "heatmap", z, x: positions(keys), y: positions(queries), zmin: 0,
    zmax: Math.max(...z.flat()),
    colorscale: "Viridis", colorbar: {title: {text: "weight"}},
    customdata: queries.map((query) => keys.map((key) => [query, key])),
    hovertemplate: "query: %{customdata[0]}<br>key: %{customdata[1]}<br>"
      + "weight: %{z:.3f}<extra></extra>",
  }], {
    width: Math.max(400, 220 + 22 * keys.length),
    height: Math.max(360, 200 + 22 * queries.length),
    xaxis: {tickvals: positions(keys), ticktext: keys, side: "top", tickangle: -90,
            title: {text: "key"}},
    yaxis: {tickvals: positions(queries), ticktext: queries, autorange: "reversed",
            title: {text: "query"}},
    margin: {t: 120, l: 100}, template: "plotly_white",
  }, PLOT_CONFIG);
}

/** The maps' heatmap with a picker of map, layer and head (or all heads averaged). */
function showAttention(box, maps) {
  const picker = (name, label) => {
    const select = el("select", {name});
    box.querySelector(".pickers").append(el("label", {}, label, " ", select));
    return select;
  };
  box.append(el("div", {class: "pickers"}));
  const mapPick = picker("map", "Map");
  const layerPick = picker("layer", "Layer");
  const headPick = picker("head", "Head");
  const plot = el("div", {class: "attention-map"});
  box.append(plot);
  maps.forEach((map, index) => mapPick.append(new Option(map.name, index)));
  const fillLayersAndHeads = () => {
    const weights = maps[mapPick.value].weights;
    // "layer 1", not "1": a label that reads like another option's value misleads.
    const numbered = (items, noun) =>
      items.map((_, index) => new Option(`${noun} ${index + 1}`, index));
    layerPick.replaceChildren(...numbered(weights, "layer"));
    headPick.replaceChildren(new Option("all heads, averaged", "mean"),
                             ...numbered(weights[0], "head"));
  };
  const draw = () => drawHeatmap(plot, maps[mapPick.value], Number(layerPick.value),
                                 headPick.value === "mean" ? "mean" : Number(headPick.value));
  mapPick.addEventListener("change", () => { fillLayersAndHeads(); draw(); });
  layerPick.addEventListener("change", draw);
  headPick.addEventListener("change", draw);
  fillLayersAndHeads();
  draw();
}

// --- one tab per model -----------------------------------------------------------------

/** A labelled control of `FIELDS`; a list of names is a row of them. */
function field(name) {
  if (Array.isArray(name)) return el("div", {class: "numbers"}, ...name.map(field));
  const {label, tag = "input", ...attributes} = FIELDS[name];
  const control = el(tag, {name, ...attributes});
  if (tag === "input" && !attributes.type) control.type = "text";
  return el("label", {}, label, control);
}

function modelSection(model) {
  const kind = KINDS[model.kind] || RAW_KIND;
  const version = model.version === null ? "no version loaded" : `version ${model.version}`;
  const section = el("section", {"data-model": model.name, role: "tabpanel", hidden: ""},
    el("h2", {}, model.name),
    el("p", {class: "about"}, `${model.kind || "a SavedModel of unknown kind"}, ${version}`));
  if (model.problem) section.append(errorBox(model.problem));
  const button = el("button", {type: "submit"}, kind.button);
  const form = el("form", {}, ...kind.fields.map(field),
                  ...(kind.extraFields ? kind.extraFields(model) : []), button);
  const output = el("div", {class: "result", "aria-live": "polite"});
  const attention = el("div", {class: "attention"});
  section.append(form, output, attention);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(form));
    button.disabled = true;  // one request at a time: no older answer drawn over a newer
    section.setAttribute("aria-busy", "true");
    await Promise.all([
      fill(output, "Asking the model…", (box) => kind.show(model, values, box)),
      kind.attention && fill(attention, "Computing the attention…", async (box) => {
        const answer = await call(
          `kerasformer/models/${encodeURIComponent(model.name)}/attention`,
          kind.attention(values));
        box.replaceChildren(el("h3", {}, "Attention"));
        showAttention(box, answer.maps);
      }),
    ]);
    button.disabled = false;
    section.setAttribute("aria-busy", "false");
  });
  return section;
}

/** Show ``note`` in ``box`` until ``draw`` fills it, or the error where it fails. */
async function fill(box, note, draw) {
  box.replaceChildren(el("p", {class: "note"}, note));
  try {
    await draw(box);
  } catch (error) {
    box.replaceChildren(errorBox(error));
  }
}

function selectTab(name) {
  for (const button of document.querySelectorAll("nav button")) {
    button.setAttribute("aria-selected", String(button.dataset.model === name));
  }
  for (const section of document.querySelectorAll("main section")) {
    section.hidden = section.dataset.model !== name;
  }
}

async function start() {
  const nav = document.querySelector("nav");
  const main = document.querySelector("main");
  let models;
  try {
    models = (await call("kerasformer/models")).models;
  } catch (error) {
    main.append(errorBox(error));
    return;
  }
  for (const model of models) {
    const tab = el("button", {role: "tab", "data-model": model.name}, model.name);
    tab.addEventListener("click", () => selectTab(model.name));
    nav.append(tab);
    main.append(modelSection(model));
  }
  if (models.length) selectTab(models[0].name);
}

start();
</script>
</body>
</html>
"""


def plotly_js_path() -> Path:
    """plotly.js as the plotly package ships it: the page fetches nothing from elsewhere."""
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def page_html() -> str:
    """The try-it page: static, it reads what is served from ``/kerasformer/models``."""
    return PAGE


async def attention_json(model, body: bytes, executor) -> dict:
    """The attention maps of ``model``'s export for ``{"text": ..., "context": ...}``.

    Raises:
        BadRequest: a body that is not that JSON, a question without its context, a context
            for a model that reads one text, or a model with no attention view (a tagger).
    """
    try:
        request = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BadRequest('the body must be JSON: {"text": "...", "context": "..."}.') from None
    text = request.get("text") if isinstance(request, dict) else None
    second = request.get("context") if isinstance(request, dict) else None
    if not isinstance(text, str) or not text.strip() or not isinstance(second, str | None):
        raise BadRequest('give "text" (and "context" for a question answerer) as strings.')
    check_context(model, second or None)
    loop = asyncio.get_running_loop()
    maps = await loop.run_in_executor(executor, attention_maps, model.base_path, text, second)
    return {"maps": [
        {"name": found.name, "query_tokens": list(found.query_tokens),
         "key_tokens": list(found.key_tokens), "weights": found.weights.round(4).tolist()}
        for found in maps
    ]}  # fmt: skip


def check_context(model, context: str | None) -> None:
    """Say in the request's own terms (not the command line's) when "context" is wrong."""
    kind = model.kind.name if model.kind else None
    if kind == "question answerer" and context is None:
        raise BadRequest(
            f'{model.name!r} is a question answerer: give the question as "text" and the '
            'paragraph to find its answer in as "context".'
        )
    if kind in ONE_TEXT_KINDS and context is not None:
        raise BadRequest(f'{model.name!r} is {model.kind.noun}, which reads one text; '
                         'leave out "context".')  # fmt: skip


def attention_maps(export: Path, text: str, second: str | None) -> list:
    """`export_attention_maps`, one at a time; an export without the view is a `BadRequest`."""
    from kerasformer.loading.attention import export_attention_maps

    with _ATTENTION_LOCK:
        try:
            return export_attention_maps(export, text, second or None)
        except KerasformerError as error:
            raise BadRequest(f"no attention view: {error}") from None
