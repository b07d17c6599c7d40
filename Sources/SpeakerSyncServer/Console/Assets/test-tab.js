// "Run test recording": (a) a synthetic meeting made on the server with exact truth, or (b) your own
// recording with an optional RTTM reference, streamed through each chosen provider like a device,
// scored (DER, WDER, speaker count, latency) and compared on the workbench: waveform, player, the
// reference lane and one lane per provider with its errors; (c) the browser's microphone, with the
// server recognising the words and the session's protocol messages logged.
import { api } from "./api.js";
import { SpeakerColours } from "./charts.js";
import { format, tableRow } from "./live-tab.js";
import { MicrophoneSession } from "./microphone.js";
import { ProtocolLog } from "./protocol-log.js";
import { renderTranscript } from "./transcript-view.js";
import { UploadForm } from "./upload-form.js";
import { Workbench } from "./workbench.js";

export class TestTab {
  constructor(state) {
    this.state = state;
    this.status = document.getElementById("test-status");
    this.results = document.getElementById("test-results");
    this.live = document.getElementById("test-live");
    this.workbenchContainer = document.getElementById("test-workbench");
    this.workbench = new Workbench(this.workbenchContainer);
    this.upload = new UploadForm();
    this.protocolLog = new ProtocolLog(document.getElementById("mic-protocol"));
    document.getElementById("test-form").onsubmit = (event) => { event.preventDefault(); this.runSynthetic(); };
    document.getElementById("upload-run").onclick = () => this.runUpload();
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

  /// What both kinds of recording share: the providers ticked, the speed, and the device (the admin's choice).
  settings() {
    return {
      providers: [...document.querySelectorAll("#test-providers input:checked")].map((box) => box.value),
      speed: Number(document.getElementById("test-speed").value),
      deviceID: this.state.me.device_id == null ? (document.getElementById("device-id").value.trim() || "console") : null,
    };
  }

  async runSynthetic() {
    const { providers, speed, deviceID } = this.settings();
    const body = {
      providers, speed,
      speakers: Number(document.getElementById("test-speakers").value),
      turns: Number(document.getElementById("test-turns").value),
    };
    const seed = document.getElementById("test-seed").value;
    if (seed !== "") body.seed = Number(seed);
    if (deviceID) body.device_id = deviceID;
    await this.run(async () => {
      await this.workbench.setAudio(null);
      return api.post("/v1/test-recordings", body);
    });
  }

  async runUpload() {
    await this.run(async () => {
      const { form, original, decoded, bytes } = await this.upload.build(this.settings());
      this.status.textContent = `uploading ${(bytes / 1048576).toFixed(1)} MB…`;
      // The original file plays (any format the browser plays); the waveform is the decoded audio.
      await this.workbench.setAudio(original, decoded);
      return api.postForm("/v1/test-recordings", form);
    });
  }

  /// Starts a recording with `start` (which answers its first report), follows it to the end, then
  /// shows the stored transcript and, for a synthetic meeting, plays its stored audio.
  async run(start) {
    const buttons = [document.getElementById("test-run"), document.getElementById("upload-run")];
    for (const button of buttons) button.disabled = true;
    this.status.dataset.status = "starting";
    try {
      let report = await start();
      this.colours = new SpeakerColours();
      while (report.status !== "done" && report.status !== "failed") {
        this.showReport(report);
        await this.followLive(report);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        report = await api.get(`/v1/test-recordings/${report.id}`);
      }
      if (report.source !== "upload") await this.loadStoredAudio(report);
      this.showReport(report);
      await this.showStored(report);
    } catch (error) {
      const hint = error.code === "body_too_large" ? " (a longer recording needs serve --max-body-bytes raised)" : "";
      this.status.textContent = `${error.code ?? "error"}: ${error.message}${hint}`;
      this.status.dataset.status = "refused";
    } finally {
      for (const button of buttons) button.disabled = false;
    }
  }

  /// The meeting as the sessions stored it (test recordings keep their audio), for the player and waveform.
  async loadStoredAudio(report) {
    const done = report.results.find((r) => r.status === "done");
    if (!done) return;
    const audio = await api.blob(`/v1/conversations/${encodeURIComponent(done.conversation_id)}/audio?format=wav`).catch(() => null);
    if (audio) await this.workbench.setAudio(audio);
  }

  /// Once done, the first provider's stored transcript replaces the live view (the live one may
  /// miss the labels finalize gave); an upload without recognised words has none.
  async showStored(report) {
    const done = report.results.find((r) => r.status === "done" && r.word_count > 0);
    this.live.hidden = !done;
    if (!done) return;
    const transcript = await api.get(`/v1/conversations/${encodeURIComponent(done.conversation_id)}/transcript?format=json`);
    this.live.dataset.conversation = done.conversation_id;
    renderTranscript(this.live, transcript.utterances, this.colours);
  }

  /// While a provider streams, its session's transcript as the device sees it.
  async followLive(report) {
    const streaming = report.results.find((r) => r.status === "streaming");
    if (!streaming) return;
    try {
      const session = await api.get(`/v1/sessions/${encodeURIComponent(streaming.conversation_id)}`);
      const utterances = session.transcript?.utterances || [];
      this.live.hidden = utterances.length === 0;
      renderTranscript(this.live, utterances, this.colours);
    } catch { /* not started yet or just ended */ }
  }

  showReport(report) {
    const phase = { synthesising: "synthesising the meeting…", preparing: "preparing the upload…", streaming: "streaming…", done: "done", failed: "failed" }[report.status];
    const upload = report.source === "upload";
    const what = upload ? `(${report.request.file_name ?? "upload"}${report.request.reference ? ", with its RTTM" : ", no reference"})` : `(seed ${report.request.seed})`;
    const audio = report.audio_seconds
      ? ` · ${report.audio_seconds.toFixed(1)} s of audio` + (report.truth.turns.length ? `, ${report.truth.speaker_count} speakers` : "") +
        (report.truth.word_count != null ? `, ${report.truth.word_count} words` : "")
      : "";
    this.status.textContent = `Test recording ${report.id} ${what}: ${phase}${audio}${report.error ? " · " + report.error : ""}`;
    this.status.dataset.status = report.status;
    this.results.hidden = false;
    const body = this.results.querySelector("tbody");
    body.replaceChildren(...report.results.map((r) => tableRow([r.provider, r.error ? `${r.status}: ${r.error}` : r.status, format.percent(r.der), format.percent(r.der_collar), format.percent(r.wder),
        r.speakers_found == null ? "—" : `${r.speakers_found} / ${r.speakers_reference ?? "?"}`, r.unlabelled_word_count ?? "—",
        r.label_latency_seconds ? `${format.ms(r.label_latency_seconds.p50)} / ${format.ms(r.label_latency_seconds.p95)}` : "—",
        format.number(r.real_time_factor), r.chunk_seconds ? format.ms(r.chunk_seconds.p50) : "—", errorParts(r)],
      { provider: r.provider, status: r.status })));
    this.showWorkbench(report);
  }

  showWorkbench(report) {
    const reference = report.truth.turns.length
      ? { title: report.source === "upload" ? "reference (RTTM)" : "truth", subtitle: `${report.truth.speaker_count} speakers`, turns: report.truth.turns }
      : null;
    const providers = report.results.map((r) => ({
      title: r.provider,
      subtitle: r.der != null ? `DER ${format.percent(r.der)}` : r.turns ? `${r.speakers_found} speakers` : r.status,
      turns: r.turns || [], mapping: r.speaker_mapping, errors: r.errors,
    }));
    this.workbenchContainer.hidden = false;
    this.workbench.show({ duration: report.audio_seconds, reference, providers });
  }

  async startMicrophone() {
    const status = document.getElementById("mic-status");
    const colours = new SpeakerColours();
    this.protocolLog.reset();
    this.microphone = new MicrophoneSession({
      provider: document.getElementById("mic-provider").value,
      deviceID: this.state.me.device_id == null ? (document.getElementById("device-id").value.trim() || "console") : null,
      onTranscript: (transcript) => renderTranscript(document.getElementById("mic-transcript"), transcript.ordered, colours),
      onStatus: (text) => {
        status.textContent = text;
        status.dataset.sampleRate = this.microphone?.sampleRate ?? "";
      },
      onProtocol: (direction, message) => this.protocolLog.add(direction, message),
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

/// Missed speech, false alarm and confusion as shares of the reference speech (they add up to DER).
function errorParts(result) {
  const parts = result.der_seconds;
  if (!parts || !parts.reference) return "—";
  const share = (seconds) => `${((seconds / parts.reference) * 100).toFixed(1)}%`;
  return `${share(parts.missed)} / ${share(parts.false_alarm)} / ${share(parts.confusion)}`;
}
