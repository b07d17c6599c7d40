// The comparison workbench: a recording's waveform, a player, and one lane of turns per provider under
// the reference lane, all on one time axis with a playhead that follows playback. Clicking the
// waveform or a lane seeks there, so a developer can listen to exactly where providers disagree.
import { decodeMono, peaks } from "./audio-file.js";
import { SpeakerColours } from "./charts.js";
import { clock, drawLanes, errorKinds } from "./lanes.js";

/// Room on the left for lane titles, and on the right so the last tick label fits.
const gutter = 180, margin = 16, waveformHeight = 72;

function element(name, className, text) {
  const node = document.createElement(name);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class Workbench {
  constructor(container) {
    this.container = container;
    this.legend = element("div", "workbench-legend");
    this.player = element("audio", "workbench-player");
    this.player.controls = true;
    this.player.preload = "auto";
    this.time = element("span", "workbench-time muted");
    this.stage = element("div", "workbench-stage");
    this.canvas = element("canvas", "waveform");
    this.lanes = element("div", "workbench-lanes");
    this.playhead = element("div", "playhead");
    this.playhead.hidden = true;
    this.stage.append(this.canvas, this.lanes, this.playhead);
    const controls = element("div", "row");
    controls.append(this.player, this.time);
    container.replaceChildren(controls, this.stage, this.legend);
    this.duration = 1;
    this.position = 0;
    this.view = { reference: null, providers: [] };
    this.stage.onclick = (event) => this.seekTo(event);
    this.player.addEventListener("play", () => this.follow());
    for (const name of ["pause", "seeked", "timeupdate", "loadedmetadata"]) this.player.addEventListener(name, () => this.place());
    window.addEventListener("resize", () => this.redraw());
  }

  get width() { return Math.max(640, Math.floor(this.container.clientWidth || 1000)); }

  /// Where `seconds` lies on the page, the same for the waveform, every lane and the playhead.
  x(seconds) { return gutter + (seconds / this.duration) * (this.width - gutter - margin); }

  /// Plays `source` (a Blob, or nothing) and draws its waveform; `decoded` skips decoding again
  /// when the caller already has the samples ({samples, sampleRate, seconds}).
  async setAudio(source, decoded = null) {
    if (this.url) URL.revokeObjectURL(this.url);
    this.url = source ? URL.createObjectURL(source) : null;
    if (this.url) this.player.src = this.url; else this.player.removeAttribute("src");
    this.audio = decoded;
    if (source && !decoded) {
      try {
        this.audio = await decodeMono(await source.arrayBuffer());
      } catch (error) {
        this.audio = null;
        this.container.dataset.waveform = `unavailable: ${error.message}`;
      }
    }
    this.redraw();
  }

  /// The comparison to draw: `duration` (seconds), `reference` ({title, subtitle, turns} or null) and
  /// `providers` ([{title, subtitle, turns, mapping, errors}]).
  show({ duration, reference, providers }) {
    this.duration = Math.max(1, duration || this.audio?.seconds || 1);
    this.view = { reference, providers };
    this.redraw();
  }

  redraw() {
    this.referenceColours = new SpeakerColours();
    // The reference's colours in order of first appearance, as its lane and the legend show them.
    for (const turn of [...(this.view.reference?.turns || [])].sort((a, b) => a.start - b.start)) this.referenceColours.colour(turn.speaker);
    this.drawWaveform();
    drawLanes(this.lanes, { ...this.view, width: this.width, duration: this.duration, x: (s) => this.x(s), referenceColours: this.referenceColours });
    this.drawLegend();
    this.place();
  }

  drawWaveform() {
    const ratio = window.devicePixelRatio || 1, width = this.width;
    this.canvas.width = width * ratio;
    this.canvas.height = waveformHeight * ratio;
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${waveformHeight}px`;
    const context = this.canvas.getContext("2d");
    context.scale(ratio, ratio);
    context.clearRect(0, 0, width, waveformHeight);
    context.fillStyle = "#1d232b";
    context.font = "600 12px system-ui, sans-serif";
    context.fillText("waveform", 8, 16);
    const middle = waveformHeight / 2;
    context.fillStyle = "#d9dee5";
    context.fillRect(this.x(0), middle, this.x(this.duration) - this.x(0), 1);
    if (!this.audio) {
      context.fillStyle = "#66707c";
      context.font = "12px system-ui, sans-serif";
      context.fillText(this.url ? "decoding…" : "no audio to draw", this.x(0) + 6, middle - 6);
      this.container.dataset.waveform ??= "none";
      return;
    }
    const columns = Math.max(1, Math.round(this.x(Math.min(this.audio.seconds, this.duration)) - this.x(0)));
    const { low, high } = peaks(this.audio.samples.subarray(0, Math.round(Math.min(this.audio.seconds, this.duration) * this.audio.sampleRate)), columns);
    // Quiet speech stays visible: scaled to the loudest peak, not to full scale.
    const loudest = Math.max(1e-4, ...high, ...low.map((v) => -v));
    context.fillStyle = "#5d7896";
    for (let column = 0; column < columns; column++) {
      const top = middle - (high[column] / loudest) * (middle - 4), bottom = middle - (low[column] / loudest) * (middle - 4);
      context.fillRect(this.x(0) + column, top, 1, Math.max(1, bottom - top));
    }
    this.container.dataset.waveform = "drawn";
  }

  drawLegend() {
    const items = [];
    const swatch = (colour, text, data = {}) => {
      const item = element("span", "legend-item");
      Object.assign(item.dataset, data);
      const box = element("span", "swatch");
      box.style.background = colour;
      item.append(box, document.createTextNode(text));
      return item;
    };
    if (this.view.reference) {
      for (const [label, colour] of this.referenceColours.assigned) items.push(swatch(colour, label, { speaker: label }));
      items.push(element("span", "muted", "Provider turns take the colour of the reference speaker they map to (the optimal one-to-one mapping); brown-grey: no counterpart."));
      const errors = element("span", "legend-errors");
      errors.append(document.createTextNode("Errors (no collar): "), ...errorKinds.map((e) => swatch(e.colour, e.name, { kind: e.kind })));
      items.push(errors);
    } else if (this.view.providers.length) {
      items.push(element("span", "muted", "No reference: each lane's colours are its own labels; upload an RTTM to score and colour errors."));
    }
    this.legend.replaceChildren(...items);
  }

  /// Moves the playhead to the player's time (or the last click when nothing plays).
  place() {
    if (this.url) this.position = this.player.currentTime || 0;
    this.playhead.hidden = false;
    this.playhead.style.left = `${this.x(Math.min(this.position, this.duration))}px`;
    this.time.textContent = `${clock(this.position)} / ${clock(this.duration)}`;
    this.container.dataset.position = this.position.toFixed(2);
  }

  follow() {
    const step = () => {
      this.place();
      if (!this.player.paused && !this.player.ended) requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }

  seekTo(event) {
    const offset = event.clientX - this.stage.getBoundingClientRect().left;
    if (offset < gutter) return;
    const seconds = Math.max(0, Math.min(this.duration, ((offset - gutter) / (this.width - gutter - margin)) * this.duration));
    this.position = seconds;
    if (this.url) this.player.currentTime = seconds;
    this.place();
  }
}
