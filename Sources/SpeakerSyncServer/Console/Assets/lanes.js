// One lane per labelling over a shared time axis, the reference on top: the comparison view of the
// workbench (SVG drawn by hand, like charts.js). Under each provider's lane, a strip shows where it
// goes wrong against the reference, as pyannote.metrics counts the diarization error.
import { SpeakerColours } from "./charts.js";

const svgNS = "http://www.w3.org/2000/svg";

/// The three parts of the diarization error, in the order and colours of the legend.
export const errorKinds = [
  { kind: "missed", name: "missed speech", colour: "#f59f00" },
  { kind: "false_alarm", name: "false alarm", colour: "#7048e8" },
  { kind: "confusion", name: "speaker confusion", colour: "#e03131" },
];
const errorColour = Object.fromEntries(errorKinds.map((e) => [e.kind, e.colour]));
/// Speakers with no counterpart in the reference: muted, so they read as "not one of the reference's".
const unmappedPalette = ["#8d6e63", "#78909c", "#a1887f", "#90a4ae", "#6d4c41", "#546e7a"];

/// A lane is at least as tall as its title and subtitle, however few rows its turns take.
const rowHeight = 16, laneGap = 8, stripHeight = 9, axisHeight = 22, minLaneHeight = 30;

function node(name, attributes = {}, text) {
  const element = document.createElementNS(svgNS, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

function tooltip(element, text) {
  element.append(node("title", {}, text));
  return element;
}

/// Rows for turns that overlap within one lane (overlapped speech, or a labelling's own overlap):
/// each turn takes the first row free at its start, so no turn hides another.
export function stack(turns) {
  const ends = [];
  return [...turns].sort((a, b) => a.start - b.start || a.end - b.end).map((turn) => {
    let row = ends.findIndex((end) => end <= turn.start + 1e-6);
    if (row < 0) { row = ends.length; ends.push(0); }
    ends[row] = turn.end;
    return { turn, row };
  });
}

export function clock(seconds) {
  if (seconds < 120) return `${Math.round(seconds * 10) / 10}s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

/// Draws the lanes into `container`. `reference`: {title, turns} or null; `providers`: [{title,
/// subtitle, turns, mapping, errors}] where `mapping` (hypothesis label → reference label, the
/// scoring's optimal one-to-one mapping) colours each speaker as the reference speaker it stands for.
/// `x(seconds)` places time; `referenceColours` gives the reference speakers' colours.
export function drawLanes(container, { reference, providers, width, x, duration, referenceColours }) {
  const lanes = [];
  if (reference) lanes.push({ kind: "reference", title: reference.title, subtitle: reference.subtitle, turns: reference.turns });
  for (const provider of providers) lanes.push({ kind: "provider", ...provider });
  const layout = lanes.map((lane) => {
    const stacked = stack(lane.turns || []);
    const rows = Math.max(1, ...stacked.map((s) => s.row + 1));
    const strip = lane.kind === "provider" && reference ? stripHeight + 3 : 0;
    return { lane, stacked, rows, height: Math.max(minLaneHeight, rows * rowHeight + strip) };
  });
  const height = layout.reduce((sum, l) => sum + l.height + laneGap, laneGap) + axisHeight;
  const svg = node("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "speaker lanes", class: "lanes" });
  // The time grid first, so the turns are drawn over it rather than cut by it.
  const bottom = height - axisHeight;
  const step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600].find((s) => duration / s <= 12) ?? 1200;
  for (let t = 0; t <= duration + 1e-6; t += step) {
    svg.append(node("line", { x1: x(t), x2: x(t), y1: laneGap / 2, y2: bottom, class: "tick" }));
    svg.append(node("text", { x: x(t) - 6, y: bottom + 14, class: "tick-label" }, clock(t)));
  }
  let y = laneGap;
  for (const { lane, stacked, rows, height: laneHeight } of layout) {
    const group = node("g", { class: `lane lane-${lane.kind}`, "data-lane": lane.kind === "reference" ? "reference" : lane.title });
    group.append(node("rect", { x: 0, y: y - laneGap / 2, width, height: laneHeight + laneGap, class: "lane-band" }));
    group.append(node("text", { x: 8, y: y + 12, class: "lane-title" }, lane.title));
    if (lane.subtitle) group.append(node("text", { x: 8, y: y + 25, class: "lane-subtitle" }, lane.subtitle));
    const colourOf = laneColours(lane, reference, referenceColours);
    for (const { turn, row } of stacked) {
      const left = x(turn.start), right = x(Math.min(turn.end, duration));
      const mapped = lane.mapping?.[turn.speaker];
      const rect = node("rect", {
        x: left, y: y + row * rowHeight + 1, width: Math.max(1, right - left), height: rowHeight - 3, rx: 2,
        fill: colourOf(turn.speaker), class: "turn", "data-speaker": turn.speaker,
      });
      tooltip(rect, `${turn.speaker}${mapped ? ` (≙ ${mapped})` : ""} · ${clock(turn.start)}–${clock(turn.end)}`);
      group.append(rect);
      // The label inside the turn when it fits: a lane's own names, not the reference's.
      if (right - left > 8 * turn.speaker.length + 8) {
        group.append(node("text", { x: left + 4, y: y + row * rowHeight + 11, class: "turn-label" }, turn.speaker));
      }
    }
    if (lane.kind === "provider" && reference) {
      const top = y + rows * rowHeight + 1;
      group.append(tooltip(node("rect", { x: x(0), y: top, width: x(duration) - x(0), height: stripHeight, class: "error-strip" }),
        "no error here"));
      for (const error of lane.errors || []) {
        const left = x(error.start), right = x(Math.min(error.end, duration));
        const kind = errorKinds.find((e) => e.kind === error.kind);
        group.append(tooltip(node("rect", {
          x: left, y: top, width: Math.max(1, right - left), height: stripHeight, fill: errorColour[error.kind],
          class: "error", "data-kind": error.kind,
        }), `${kind?.name ?? error.kind}${error.speakers > 1 ? ` ×${error.speakers}` : ""} · ${clock(error.start)}–${clock(error.end)}`));
      }
    }
    svg.append(group);
    y += laneHeight + laneGap;
  }
  container.replaceChildren(svg);
  return svg;
}

/// A speaker's colour in one lane: the reference's own colours on the reference lane; a provider's
/// speaker takes the colour of the reference speaker it is mapped to, an unmapped one a muted colour;
/// without a reference each lane's colours are its own.
function laneColours(lane, reference, referenceColours) {
  if (lane.kind === "reference") return (speaker) => referenceColours.colour(speaker);
  if (!reference) {
    const own = new SpeakerColours();
    return (speaker) => own.colour(speaker);
  }
  const unmapped = new Map();
  return (speaker) => {
    const mapped = lane.mapping?.[speaker];
    if (mapped) return referenceColours.colour(mapped);
    if (!unmapped.has(speaker)) unmapped.set(speaker, unmappedPalette[unmapped.size % unmappedPalette.length]);
    return unmapped.get(speaker);
  };
}
