// INTERIM: replaced by the MessageFormatting versions (helper branch `richtext`) when merged.
import IsthmusCommon
import MessageFormatting

enum MatrixReplyFallback {
    static func strip(body: String, formattedBody: String?) -> (body: String, formattedBody: String?) {
        guard let html = formattedBody, html.hasPrefix("<mx-reply>"), let end = html.firstRange(of: "</mx-reply>") else {
            return (body, formattedBody)
        }
        var lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        while let first = lines.first, first.hasPrefix(">") { lines.removeFirst() }
        if lines.first?.isEmpty == true { lines.removeFirst() }
        return (lines.joined(separator: "\n"), String(html[end.upperBound...]))
    }
}

enum XMPPFallback {
    static func removing(ranges: [Range<Int>]?, from body: String) -> String {
        guard let ranges else { return "" }
        let scalars = Array(body.unicodeScalars)
        var keep = [Bool](repeating: true, count: scalars.count)
        for range in ranges {
            let lower = max(0, min(range.lowerBound, scalars.count)), upper = max(lower, min(range.upperBound, scalars.count))
            for index in lower..<upper { keep[index] = false }
        }
        var out = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() where keep[index] { out.append(scalar) }
        return String(out)
    }
}

enum ReplyQuote {
    static func make(nick: String, excerpt: String) -> (text: String, range: Range<Int>) {
        var lines = excerpt.split(separator: "\n", omittingEmptySubsequences: false).prefix(3).map { "> " + $0 }
        if lines.isEmpty { lines = [] }
        let text = "> \(nick):\n" + lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
        return (text, 0..<text.unicodeScalars.count)
    }
}

struct LeadingMentionMatch { var nick: String; var range: Range<String.Index> }
enum LeadingMention {
    static func find(in body: String, nicks: [String]) -> LeadingMentionMatch? {
        for nick in nicks.sorted(by: { $0.count > $1.count }) where !nick.isEmpty {
            for separator in [":", ","] where body.hasPrefix(nick + separator) {
                return LeadingMentionMatch(nick: nick, range: body.startIndex..<body.index(body.startIndex, offsetBy: nick.count))
            }
        }
        return nil
    }
}

enum MentionPill {
    static func formattedBody(for body: String, mention: LeadingMentionMatch, user: UserID, unstyled: Bool) -> String {
        let rest = String(body[mention.range.upperBound...])
        let escape = { (text: String) in
            text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
        }
        return "<a href=\"https://matrix.to/#/\(user.rawValue)\">\(escape(mention.nick))</a>" + (StylingToHTML.convert(rest, unstyled: unstyled) ?? escape(rest))
    }
}

enum PlainBodyStyling {
    static func needsUnstyled(_ body: String) -> Bool { StylingToHTML.convert(body) != nil }
}
