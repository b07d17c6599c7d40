// Audio in the page: any file the browser can decode, as mono samples (for the waveform, and for the
// 16 kHz WAV an upload sends), and WAV encoding of those samples. No library: Web Audio decodes.

/// The rate an upload is sent at: what every provider diarizes at, and 32 KB a second of 16-bit PCM,
/// so a long recording stays under the server's body limit (`serve --max-body-bytes`, 8 MiB by default).
export const uploadRate = 16000;

/// The file's audio mixed to mono at `sampleRate`: { samples: Float32Array, sampleRate, seconds }.
export async function decodeMono(arrayBuffer, sampleRate = uploadRate) {
  // An OfflineAudioContext needs no audio device (headless browsers, servers without sound) and
  // resamples to its own rate while decoding; the channels are mixed here.
  const context = new OfflineAudioContext(1, 1, sampleRate);
  const buffer = await context.decodeAudioData(arrayBuffer);
  const samples = new Float32Array(buffer.length);
  for (let channel = 0; channel < buffer.numberOfChannels; channel++) {
    const data = buffer.getChannelData(channel);
    for (let i = 0; i < data.length; i++) samples[i] += data[i] / buffer.numberOfChannels;
  }
  return { samples, sampleRate: buffer.sampleRate, seconds: buffer.duration };
}

/// 16-bit mono PCM WAV bytes of `samples` (clipped to ±1, as a device encodes them).
export function encodeWAV(samples, sampleRate) {
  const bytes = new ArrayBuffer(44 + samples.length * 2);
  const view = new DataView(bytes);
  const text = (offset, value) => { for (let i = 0; i < value.length; i++) view.setUint8(offset + i, value.charCodeAt(i)); };
  text(0, "RIFF");
  view.setUint32(4, 36 + samples.length * 2, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, "data");
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    view.setInt16(44 + i * 2, Math.round(Math.max(-1, Math.min(1, samples[i])) * 32767), true);
  }
  return new Blob([bytes], { type: "audio/wav" });
}

/// The lowest and highest sample in each of `columns` equal stretches: what a waveform draws per pixel.
export function peaks(samples, columns) {
  const low = new Float32Array(columns), high = new Float32Array(columns);
  const per = samples.length / columns;
  for (let column = 0; column < columns; column++) {
    const start = Math.floor(column * per), end = Math.max(start + 1, Math.floor((column + 1) * per));
    let min = 0, max = 0;
    for (let i = start; i < end && i < samples.length; i++) {
      if (samples[i] < min) min = samples[i];
      if (samples[i] > max) max = samples[i];
    }
    low[column] = min;
    high[column] = max;
  }
  return { low, high };
}
