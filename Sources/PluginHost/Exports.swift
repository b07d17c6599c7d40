// The provider interface (ProviderHost, ProviderSession and their vocabulary) is PluginHost's API as
// much as ProviderInterface's: whoever uses the in-process host gets it with one import.
@_exported import ProviderInterface
