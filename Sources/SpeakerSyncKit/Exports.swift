// The kit speaks the server's own protocol types (`SpokenWord` is the model's `Word`, a segment a
// `DeviceSegment`, a speaker a `WireSpeaker`, the audio format an `AudioEncoding`): an app that
// imports the kit sees them, and the codec, without a second import.
@_exported import SessionProtocol
