import Foundation

/// Text conversion of `timestamptz` values without DateFormatter (which is slow and not
/// thread-safe to share). Output is always UTC; input accepts the ISO DateStyle the server
/// emits, with any UTC offset.
enum PGTimestamp {
    static func format(_ date: Date) -> String {
        let totalMicros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        var micros = Int64(totalMicros)
        var seconds = micros / 1_000_000
        micros -= seconds * 1_000_000
        if micros < 0 { micros += 1_000_000; seconds -= 1 }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let microText = String(micros)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + String(repeating: "0", count: 6 - microText.count) + microText + "Z"
    }

    /// Parses `YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM[:SS]]]` (also with `T` and `Z`).
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<digits {
                let byte = bytes[index]
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
                index += 1
            }
            return value
        }
        func expect(_ chars: [UInt8]) -> Bool {
            guard index < bytes.count, chars.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect([45]), let month = number(2), expect([45]),
              let day = number(2), expect([32, 84]), let hour = number(2), expect([58]),
              let minute = number(2), expect([58]), let second = number(2) else { return nil }
        var fraction = 0.0
        if index < bytes.count && bytes[index] == 46 {
            index += 1
            var scale = 0.1
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        var offsetSeconds = 0
        if index < bytes.count {
            let sign = bytes[index]
            if sign == 90 { index += 1 } else if sign == 43 || sign == 45 {
                index += 1
                guard let offsetHours = number(2) else { return nil }
                offsetSeconds = offsetHours * 3600
                if expect([58]), let offsetMinutes = number(2) { offsetSeconds += offsetMinutes * 60 }
                if expect([58]), let offsetSecs = number(2) { offsetSeconds += offsetSecs }
                if sign == 45 { offsetSeconds = -offsetSeconds }
            } else { return nil }
        }
        guard index == bytes.count else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let epoch = timegm(&parts)
        return Date(timeIntervalSince1970: Double(epoch - offsetSeconds) + fraction)
    }
}
