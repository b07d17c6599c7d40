// Small SVG charts drawn by hand (no chart library: the build has no Node toolchain).

const svgNS = "http://www.w3.org/2000/svg";
const palette = ["#2557d6", "#d6452b", "#1f9d55", "#9b4dca", "#d69e2e", "#0f8b8d", "#c2185b", "#5d6d7e"];

/// A stable colour per speaker label within one view.
export class SpeakerColours {
  constructor() { this.assigned = new Map(); }
  colour(label) {
    if (label == null) return "#9aa3ad";
    if (!this.assigned.has(label)) this.assigned.set(label, palette[this.assigned.size % palette.length]);
    return this.assigned.get(label);
  }
}

function element(name, attributes = {}, text) {
  const node = document.createElementNS(svgNS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/// Lanes of turns over time: `groups` is [{title, turns:[{speaker,start,end}]}]; each group gets one
/// lane per speaker, so truth and each provider's result can be read one above the other.
export function timeline(container, groups, colours, { width = 900 } = {}) {
  const lanes = [];
  for (const group of groups) {
    const speakers = [...new Set(group.turns.map((t) => t.speaker))].sort();
    if (speakers.length === 0) lanes.push({ group: group.title, speaker: null, turns: [] });
    for (const speaker of speakers) lanes.push({ group: group.title, speaker, turns: group.turns.filter((t) => t.speaker === speaker) });
  }
  const end = Math.max(1, ...groups.flatMap((g) => g.turns.map((t) => t.end)));
  const left = 190, laneHeight = 18, top = 8, axis = 22;
  const height = top + lanes.length * laneHeight + axis;
  const svg = element("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "speaker timeline", class: "timeline" });
  const x = (seconds) => left + (seconds / end) * (width - left - 10);
  lanes.forEach((lane, index) => {
    const y = top + index * laneHeight;
    if (index > 0 && lanes[index - 1].group !== lane.group) svg.append(element("line", { x1: 0, x2: width, y1: y - 1, y2: y - 1, stroke: "#d9dee5" }));
    svg.append(element("text", { x: 6, y: y + 13, "font-size": 11, fill: "#1d232b" }, `${lane.group}${lane.speaker ? " · " + lane.speaker : " (none)"}`));
    for (const turn of lane.turns) {
      svg.append(element("rect", {
        x: x(turn.start), y: y + 3, width: Math.max(1, x(turn.end) - x(turn.start)), height: laneHeight - 6, rx: 2,
        // One group (a transcript's own timeline): the transcript's colours; several: each group its own.
        fill: colours.colour(groups.length === 1 ? lane.speaker : lane.group + "|" + lane.speaker), class: "turn", "data-speaker": lane.speaker,
      }));
    }
  });
  const step = end > 120 ? 30 : end > 40 ? 10 : 5;
  for (let t = 0; t <= end; t += step) {
    const y = top + lanes.length * laneHeight;
    svg.append(element("line", { x1: x(t), x2: x(t), y1: top, y2: y + 4, stroke: "#eef0f3" }));
    svg.append(element("text", { x: x(t) - 6, y: y + 16, "font-size": 10, fill: "#66707c" }, `${t}s`));
  }
  container.replaceChildren(svg);
  return svg;
}

/// Bars of recent values (e.g. chunk processing times) with a line at `reference` (e.g. the chunk length).
export function bars(container, values, { width = 900, height = 70, label = "", unit = "ms", reference } = {}) {
  const svg = element("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label, class: "bars" });
  const max = Math.max(reference || 0, ...values, 1e-9);
  const barWidth = (width - 20) / Math.max(1, values.length);
  values.forEach((value, index) => {
    const h = (value / max) * (height - 20);
    svg.append(element("rect", { x: 10 + index * barWidth, y: height - 10 - h, width: Math.max(1, barWidth - 1), height: h, fill: "#2557d6" }));
  });
  if (reference) {
    const y = height - 10 - (reference / max) * (height - 20);
    svg.append(element("line", { x1: 10, x2: width - 10, y1: y, y2: y, stroke: "#b3261e", "stroke-dasharray": "4 3" }));
  }
  svg.append(element("text", { x: 12, y: 12, "font-size": 11, fill: "#66707c" }, `${label} (max ${(max * (unit === "ms" ? 1000 : 1)).toFixed(1)} ${unit})`));
  container.replaceChildren(svg);
}
