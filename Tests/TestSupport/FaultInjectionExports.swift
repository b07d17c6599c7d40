// The TCP proxy and the long-lived parent thread live in FaultInjection (the fault harness uses them
// too); tests that import TestSupport keep finding them here.
@_exported import FaultInjection
