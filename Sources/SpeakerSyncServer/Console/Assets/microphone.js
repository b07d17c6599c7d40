// Streams the browser's microphone to /v1/listen like a device: a `start` with "asr":"server" (a
// browser has no timed recogniser), 100 ms binary frames of pcm_s16le, `finalize` at the end.
import { credential, webSocketURL } from "./api.js";

export class LiveTranscript {
  constructor() { this.utterances = new Map(); this.isFinal = false; }
  apply(message) {
    for (const id of message.removed || []) this.utterances.delete(id);
    for (const utterance of message.upserted || []) this.utterances.set(utterance.id, utterance);
    if (message.final) this.isFinal = true;
  }
  get ordered() { return [...this.utterances.values()].sort((a, b) => a.start - b.start); }
}

export class MicrophoneSession {
  /// `onProtocol(direction, message)`, optional: every message on the socket, as sent or received
  /// (parsed JSON, or the ArrayBuffer of an audio frame), for the protocol log.
  constructor({ provider, deviceID, onTranscript, onStatus, onProtocol = () => {} }) {
    Object.assign(this, { provider, deviceID, onTranscript, onStatus, onProtocol });
    this.transcript = new LiveTranscript();
    this.pending = [];
    this.started = false;
  }

  async start() {
    // Raw audio: the browser's echo cancellation, noise suppression and gain control reshape voices
    // over time, which blurs the speaker embeddings diarization compares; nothing is played back here.
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
    });
    // The context runs at the hardware's rate: Firefox cannot connect a microphone to a context of
    // another rate. The protocol takes 8–48 kHz, so a faster context is decimated in the worklet.
    this.context = new AudioContext();
    // Started from a click, so the browser lets it run; not awaited, because a browser without an
    // audio device never settles it.
    void this.context.resume();
    const decimation = Math.ceil(this.context.sampleRate / 48000);
    this.streamRate = Math.round(this.context.sampleRate / decimation);
    await this.context.audioWorklet.addModule("/console/pcm-worklet.js");
    const token = credential.get();
    this.socket = new WebSocket(webSocketURL("/v1/listen"), token ? ["token", token] : []);
    this.socket.binaryType = "arraybuffer";
    this.socket.onopen = () => {
      const start = { type: "start", provider: this.provider, sample_rate: this.streamRate, encoding: "pcm_s16le", asr: "server" };
      if (this.deviceID) start.device_id = this.deviceID;
      this.sendJSON(start);
    };
    this.socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      this.onProtocol("received", message);
      this.received(message);
    };
    // After the final transcript and stats the socket closes; "finalized" says more than "closed".
    this.socket.onclose = (event) => {
      if (!this.transcript.isFinal) this.onStatus(`closed (${event.code}${event.reason ? ": " + event.reason : ""})`);
    };
    const source = this.context.createMediaStreamSource(this.stream);
    this.node = new AudioWorkletNode(this.context, "pcm-blocks", { processorOptions: { decimation } });
    this.node.port.onmessage = (event) => this.audio(event.data);
    source.connect(this.node);
    this.onStatus("connecting…");
  }

  audio(buffer) {
    if (!this.started) { this.pending.push(buffer); return; }
    this.sendAudio(buffer);
  }

  sendAudio(buffer) {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(buffer);
    this.onProtocol("sent", buffer);
  }

  sendJSON(message) {
    this.socket.send(JSON.stringify(message));
    this.onProtocol("sent", message);
  }

  received(message) {
    switch (message.type) {
      case "session":
        this.started = true;
        this.conversationID = message.conversation_id;
        this.sampleRate = message.sample_rate;
        this.onStatus(`recording ${message.sample_rate} Hz · conversation ${message.conversation_id} · ${message.provider}`);
        for (const buffer of this.pending.splice(0)) this.sendAudio(buffer);
        break;
      case "transcript":
        this.transcript.apply(message);
        this.onTranscript(this.transcript);
        if (message.final) this.onStatus(`finalized · conversation ${this.conversationID}`);
        break;
      case "stats":
        // The session's last message follows its final transcript; then the page closes (the server would too).
        if (this.transcript.isFinal) this.socket.close(1000);
        break;
      case "error":
        this.onStatus(`error ${message.code}: ${message.message}`);
        break;
    }
  }

  async stop() {
    this.node?.disconnect();
    this.stream?.getTracks().forEach((track) => track.stop());
    await this.context?.close();
    if (this.socket?.readyState === WebSocket.OPEN) this.sendJSON({ type: "finalize" });
    this.onStatus("finalizing…");
  }
}
