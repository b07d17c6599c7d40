// Runs on the audio rendering thread: collects the microphone's float samples into ~100 ms blocks of
// 16-bit little-endian PCM (the protocol's pcm_s16le) and hands each block to the page.
// `decimation` (processorOptions): output one sample per that many input samples, their mean (a
// context above the protocol's 48 kHz, 96 kHz say, is halved; the mean is the anti-alias filter).
class PCMBlocks extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.decimation = Math.max(1, (options.processorOptions && options.processorOptions.decimation) || 1);
    this.blockFrames = Math.round(sampleRate / this.decimation / 10);
    this.block = new Int16Array(this.blockFrames);
    this.filled = 0;
    this.sum = 0;
    this.summed = 0;
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      this.sum += channel[i];
      if (++this.summed < this.decimation) continue;
      const clipped = Math.max(-1, Math.min(1, this.sum / this.decimation));
      this.sum = 0;
      this.summed = 0;
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
