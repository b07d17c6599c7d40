// "Your own recording": the chosen audio file decoded in the page (any format the browser plays),
// sent as 16 kHz mono WAV with its optional RTTM reference to POST /v1/test-recordings as
// multipart/form-data. The original file stays in the page for playback.
import { decodeMono, encodeWAV, uploadRate } from "./audio-file.js";

export class UploadForm {
  constructor() {
    this.audioInput = document.getElementById("upload-audio");
    this.rttmInput = document.getElementById("upload-rttm");
    this.asr = document.getElementById("upload-asr");
    this.note = document.getElementById("upload-note");
    // Decoded as soon as it is chosen: the size to be sent is known before the run, and a file the
    // browser cannot decode is said at once.
    this.audioInput.addEventListener("change", () => this.prepare());
  }

  get file() { return this.audioInput.files[0] || null; }

  async prepare() {
    this.prepared = null;
    const file = this.file;
    if (!file) { this.note.textContent = ""; return null; }
    this.note.textContent = `decoding ${file.name}…`;
    const pending = (async () => {
      const decoded = await decodeMono(await file.arrayBuffer(), uploadRate);
      const wav = encodeWAV(decoded.samples, decoded.sampleRate);
      return { file, decoded, wav };
    })();
    this.pending = pending;
    try {
      const prepared = await pending;
      if (this.pending !== pending) return this.prepared;
      this.prepared = prepared;
      this.note.textContent = `${file.name}: ${prepared.decoded.seconds.toFixed(1)} s, sent as ${(prepared.wav.size / 1048576).toFixed(1)} MB of 16 kHz mono WAV`;
      this.note.dataset.state = "ready";
      return prepared;
    } catch (error) {
      this.note.textContent = `this browser cannot decode ${file.name}: ${error.message ?? error}`;
      this.note.dataset.state = "undecodable";
      return null;
    }
  }

  /// The form to post, and what the workbench needs (the original file and its samples); throws a
  /// message a person can act on when something is missing.
  async build({ providers, speed, deviceID }) {
    if (!this.file) throw new Error("choose an audio file first");
    const prepared = (this.prepared?.file === this.file ? this.prepared : null) ?? (await this.prepare());
    if (!prepared) throw new Error(this.note.textContent);
    const form = new FormData();
    form.append("providers", providers.join(","));
    form.append("speed", String(speed));
    form.append("asr", this.asr.checked ? "server" : "none");
    if (deviceID) form.append("device_id", deviceID);
    form.append("audio", prepared.wav, prepared.file.name);
    const rttm = this.rttmInput.files[0];
    if (rttm) form.append("rttm", rttm, rttm.name);
    return { form, original: prepared.file, decoded: prepared.decoded, bytes: prepared.wav.size };
  }
}
