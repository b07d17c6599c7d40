// `Word` lives in SpeakerSyncModel so that the device library (through SessionProtocol) can share it
// without linking the merger; the merger's users keep seeing it here with no second import.
@_exported import SpeakerSyncModel
