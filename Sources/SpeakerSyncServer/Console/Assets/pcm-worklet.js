// Runs on the audio rendering thread: collects the microphone's float samples into ~100 ms blocks of
// 16-bit little-endian PCM (the protocol's pcm_s16le) and hands each block to the page.
class PCMBlocks extends AudioWorkletProcessor {
  constructor() {
    super();
    this.blockFrames = Math.round(sampleRate / 10);
    this.block = new Int16Array(this.blockFrames);
    this.filled = 0;
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      const clipped = Math.max(-1, Math.min(1, channel[i]));
      this.block[this.filled++] = Math.round(clipped * 32767);
      if (this.filled === this.blockFrames) {
        this.port.postMessage(this.block.buffer, [this.block.buffer]);
        this.block = new Int16Array(this.blockFrames);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor("pcm-blocks", PCMBlocks);
