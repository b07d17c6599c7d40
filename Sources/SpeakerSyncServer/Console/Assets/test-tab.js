// "Run test recording": (a) a synthetic meeting made on the server with exact truth, streamed through
// each chosen provider like a device, scored (DER, WDER, speaker count, latency) and drawn as truth
// against each result; (b) the browser's microphone, with the server recognising the words.
import { api } from "./api.js";
import { SpeakerColours, timeline } from "./charts.js";
import { format, tableRow } from "./live-tab.js";
import { MicrophoneSession } from "./microphone.js";
import { renderTranscript } from "./transcript-view.js";

export class TestTab {
  constructor(state) {
    this.state = state;
    this.status = document.getElementById("test-status");
    this.results = document.getElementById("test-results");
    this.live = document.getElementById("test-live");
    document.getElementById("test-form").onsubmit = (event) => { event.preventDefault(); this.run(); };
    document.getElementById("mic-start").onclick = () => this.startMicrophone();
    document.getElementById("mic-stop").onclick = () => this.stopMicrophone();
  }

  show() {
    const available = this.state.providers.filter((p) => p.available && p.id !== "device" && p.id !== "none");
    const boxes = document.getElementById("test-providers");
    if (!boxes.childElementCount) {
      boxes.replaceChildren(...available.map((p, index) => {
        const label = document.createElement("label");
        const box = document.createElement("input");
        box.type = "checkbox";
        box.value = p.id;
        box.checked = p.id === this.state.me.default_provider || (index === 0 && !this.state.me.default_provider);
        label.append(box, document.createTextNode(` ${p.name}`));
        return label;
      }));
      const mic = document.getElementById("mic-provider");
      mic.replaceChildren(...available.map((p) => new Option(p.name, p.id, false, p.id === this.state.me.default_provider)));
    }
  }

  async run() {
    const providers = [...document.querySelectorAll("#test-providers input:checked")].map((box) => box.value);
    const body = {
      providers,
      speakers: Number(document.getElementById("test-speakers").value),
      turns: Number(document.getElementById("test-turns").value),
      speed: Number(document.getElementById("test-speed").value),
    };
    const seed = document.getElementById("test-seed").value;
    if (seed !== "") body.seed = Number(seed);
    if (this.state.me.device_id == null) body.device_id = document.getElementById("device-id").value.trim() || "console";
    document.getElementById("test-run").disabled = true;
    try {
      let report = await api.post("/v1/test-recordings", body);
      this.colours = new SpeakerColours();
      while (report.status !== "done" && report.status !== "failed") {
        this.showReport(report);
        await this.followLive(report);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        report = await api.get(`/v1/test-recordings/${report.id}`);
      }
      this.showReport(report);
      await this.showStored(report);
    } catch (error) {
      this.status.textContent = `${error.code ?? "error"}: ${error.message}`;
    } finally {
      document.getElementById("test-run").disabled = false;
    }
  }

  /// Once done, the first provider's stored transcript replaces the live view (the live one may
  /// miss the labels finalize gave).
  async showStored(report) {
    const done = report.results.find((r) => r.status === "done");
    if (!done) return;
    const transcript = await api.get(`/v1/conversations/${encodeURIComponent(done.conversation_id)}/transcript?format=json`);
    this.live.hidden = false;
    this.live.dataset.conversation = done.conversation_id;
    renderTranscript(this.live, transcript.utterances, this.colours);
  }

  /// While a provider streams, its session's transcript as the device sees it.
  async followLive(report) {
    const streaming = report.results.find((r) => r.status === "streaming");
    if (!streaming) return;
    try {
      const session = await api.get(`/v1/sessions/${encodeURIComponent(streaming.conversation_id)}`);
      this.live.hidden = false;
      renderTranscript(this.live, session.transcript?.utterances || [], this.colours);
    } catch { /* not started yet or just ended */ }
  }

  showReport(report) {
    const phase = { synthesising: "synthesising the meeting…", streaming: "streaming…", done: "done", failed: "failed" }[report.status];
    const audio = report.audio_seconds ? ` · ${report.audio_seconds.toFixed(1)} s of audio, ${report.truth.speaker_count} speakers, ${report.truth.word_count} words` : "";
    this.status.textContent = `Test recording ${report.id} (seed ${report.request.seed}): ${phase}${audio}${report.error ? " · " + report.error : ""}`;
    this.status.dataset.status = report.status;
    this.results.hidden = false;
    const body = this.results.querySelector("tbody");
    body.replaceChildren(...report.results.map((r) => tableRow([r.provider, r.error ? `${r.status}: ${r.error}` : r.status, format.percent(r.der), format.percent(r.der_collar), format.percent(r.wder),
        r.speakers_found == null ? "—" : `${r.speakers_found} / ${r.speakers_reference}`, r.unlabelled_word_count ?? "—",
        r.label_latency_seconds ? `${format.ms(r.label_latency_seconds.p50)} / ${format.ms(r.label_latency_seconds.p95)}` : "—",
        format.number(r.real_time_factor), r.chunk_seconds ? format.ms(r.chunk_seconds.p50) : "—"],
      { provider: r.provider, status: r.status })));
    const groups = [{ title: "truth", turns: report.truth.turns }];
    for (const r of report.results) if (r.turns) groups.push({ title: r.provider, turns: r.turns });
    if (report.truth.turns.length) timeline(document.getElementById("test-timeline"), groups, this.colours ?? new SpeakerColours());
  }

  async startMicrophone() {
    const status = document.getElementById("mic-status");
    const colours = new SpeakerColours();
    this.microphone = new MicrophoneSession({
      provider: document.getElementById("mic-provider").value,
      deviceID: this.state.me.device_id == null ? (document.getElementById("device-id").value.trim() || "console") : null,
      onTranscript: (transcript) => renderTranscript(document.getElementById("mic-transcript"), transcript.ordered, colours),
      onStatus: (text) => {
        status.textContent = text;
        status.dataset.sampleRate = this.microphone?.sampleRate ?? "";
      },
    });
    try {
      await this.microphone.start();
      document.getElementById("mic-start").disabled = true;
      document.getElementById("mic-stop").disabled = false;
    } catch (error) {
      status.textContent = `microphone unavailable: ${error.message}`;
    }
  }

  async stopMicrophone() {
    await this.microphone?.stop();
    document.getElementById("mic-start").disabled = false;
    document.getElementById("mic-stop").disabled = true;
  }
}
