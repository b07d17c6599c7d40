import Foundation

/// The `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
    /// Seconds to wait from `now`; nil when the value is neither form. A date in the past is 0.
    public static func seconds(_ value: String, now: Date = Date()) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Double(trimmed) // digits only: delay-seconds (Double, so a huge value does not overflow)
        }
        guard let date = httpDate.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// IMF-fixdate, the form RFC 9110 requires senders to use (`Sun, 06 Nov 1994 08:49:37 GMT`).
    /// A DateFormatter is not Sendable, so each call makes its own (this runs once per refused upgrade).
    private static var httpDate: DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter
    }
}
