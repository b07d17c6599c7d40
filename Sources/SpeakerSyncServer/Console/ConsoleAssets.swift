import WebSocketTransport

/// The developer console's files, compiled into the binary (SwiftPM `embedInCode`), so the server
/// serves its console wherever it is installed, with nothing to copy beside it and no Node toolchain
/// at build time: plain HTML, CSS and JavaScript modules.
enum ConsoleAssets {
    static let indexFile = "index.html"

    /// name → (content type, bytes). Only these names are served; anything else under /console is 404.
    static let files: [String: (contentType: String, bytes: [UInt8])] = [
        "index.html": ("text/html; charset=utf-8", PackageResources.index_html),
        "console.css": ("text/css; charset=utf-8", PackageResources.console_css),
        "console.js": ("text/javascript; charset=utf-8", PackageResources.console_js),
        "api.js": ("text/javascript; charset=utf-8", PackageResources.api_js),
        "charts.js": ("text/javascript; charset=utf-8", PackageResources.charts_js),
        "microphone.js": ("text/javascript; charset=utf-8", PackageResources.microphone_js),
        "pcm-worklet.js": ("text/javascript; charset=utf-8", PackageResources.pcm_worklet_js),
        "transcript-view.js": ("text/javascript; charset=utf-8", PackageResources.transcript_view_js),
        "providers-tab.js": ("text/javascript; charset=utf-8", PackageResources.providers_tab_js),
        "live-tab.js": ("text/javascript; charset=utf-8", PackageResources.live_tab_js),
        "conversations-tab.js": ("text/javascript; charset=utf-8", PackageResources.conversations_tab_js),
        "test-tab.js": ("text/javascript; charset=utf-8", PackageResources.test_tab_js),
    ]

    /// `/` and `/console/…` are the console; the gate lets them through without a credential.
    static func isConsolePath(_ path: String) -> Bool {
        path == "/" || path.hasPrefix("/console/")
    }

    static func response(file: String) -> HTTPResponse {
        guard let asset = files[file] else {
            return APIHandler.json(APIError(status: 404, code: "not_found", message: "no console file '\(file)'").jsonObject, status: 404)
        }
        return HTTPResponse(status: 200, contentType: asset.contentType, headers: [
            // The page must not be framed by another site (clickjacking) nor load scripts from elsewhere.
            ("content-security-policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'"),
            ("x-content-type-options", "nosniff"),
            ("cache-control", "no-cache"),
        ], body: asset.bytes)
    }
}
