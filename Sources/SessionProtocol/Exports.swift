// A `words` message holds the model's `Word`s (`WireInputWord`): whoever decodes or encodes one sees
// the type without a second import.
@_exported import SpeakerSyncModel
