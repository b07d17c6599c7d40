import WebSocketTransport

/// The developer console's files, compiled into the binary (SwiftPM `embedInCode`), so the server
/// serves its console wherever it is installed, with nothing to copy beside it and no Node toolchain
/// at build time: plain HTML, CSS and JavaScript modules.
enum ConsoleAssets {
    static let indexFile = "index.html"

    /// name → bytes. Only these names are served; anything else under /console is 404.
    static let files: [String: [UInt8]] = [
        "index.html": PackageResources.index_html,
        "console.css": PackageResources.console_css,
        "console.js": PackageResources.console_js,
        "api.js": PackageResources.api_js,
        "charts.js": PackageResources.charts_js,
        "microphone.js": PackageResources.microphone_js,
        "pcm-worklet.js": PackageResources.pcm_worklet_js,
        "transcript-view.js": PackageResources.transcript_view_js,
        "providers-tab.js": PackageResources.providers_tab_js,
        "live-tab.js": PackageResources.live_tab_js,
        "conversations-tab.js": PackageResources.conversations_tab_js,
        "test-tab.js": PackageResources.test_tab_js,
        "audio-file.js": PackageResources.audio_file_js,
        "lanes.js": PackageResources.lanes_js,
        "workbench.js": PackageResources.workbench_js,
        "upload-form.js": PackageResources.upload_form_js,
        "protocol-log.js": PackageResources.protocol_log_js,
        "conversation-list.js": PackageResources.conversation_list_js,
    ]

    /// `GET /` and `GET /console/{file}`, open: the page and its scripts hold no data; the page signs
    /// in to call everything else.
    static func register(in table: inout RouteTable) {
        table.add(.get, "/", name: "console", access: .open) { _ in response(file: indexFile) }
        table.add(.get, "/console/{file}", name: "console", access: .open) { context in response(file: try context.parameter(.file)) }
    }

    static func response(file: String) -> HTTPResponse {
        guard let bytes = files[file] else {
            return APIHandler.json(APIError(status: 404, code: "not_found", message: "no console file '\(file)'").jsonObject, status: 404)
        }
        return HTTPResponse(status: 200, contentType: contentType(of: file), headers: [
            // The page must not be framed by another site (clickjacking) nor load scripts from elsewhere.
            ("content-security-policy", "default-src 'self'; img-src 'self' data:; media-src 'self' blob:; style-src 'self'; frame-ancestors 'none'"),
            ("x-content-type-options", "nosniff"),
            ("cache-control", "no-cache"),
        ], body: bytes)
    }

    static func contentType(of file: String) -> String {
        if file.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if file.hasSuffix(".css") { return "text/css; charset=utf-8" }
        return "text/javascript; charset=utf-8"
    }
}
