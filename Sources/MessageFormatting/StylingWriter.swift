import IsthmusCommon

/// Walks ``HTMLEvent``s into a ``StyledLineBuilder``: the element rules of ``HTMLToStyling``. One use per
/// conversion. Pure.
struct StylingWriter {
    /// What an element's end undoes.
    private enum Frame {
        case nothing
        case style
        case blockBreak(StyledLineBuilder.Break)
        case quote
        case list
        case listItem(previousIndent: Int)
        case preformatted
        case heading
        case row
        case link(suffix: String?)
    }

    private struct List {
        var ordered: Bool
        var next: Int
        var column: Int
    }

    private let events: [HTMLEvent]
    private let mention: (UserID) -> String?
    private var builder = StyledLineBuilder()
    private var frames: [Frame] = []
    private var lists: [List] = []
    private var cellsInRow: [Int] = []
    private var mentions: [UserID] = []
    /// Depth inside a dropped element (0: not dropping).
    private var skipping = 0
    /// Depth inside `pre`, and the text gathered there verbatim.
    private var preformattedDepth = 0
    private var preformattedText = ""

    /// Lists nested deeper than this are indented like the list at this depth (bounds the indentation per line).
    static let maximumListIndentDepth = 8
    /// `ol start` is clamped to this range, so counting items can never overflow.
    static let listStartRange = -1_000_000...1_000_000_000

    /// Dropped with their content: the legacy reply fallback, `head`, and what Element's sanitizer drops with its
    /// text (sanitize-html's `nonTextTags`) or a browser never shows.
    private static let dropped: Set<String> = [
        "mx-reply", "script", "style", "head", "title", "template", "textarea", "option", "noscript",
    ]
    private static let paragraphs: Set<String> = ["p", "hr", "table", "dl", "figure"]
    private static let lineBlocks: Set<String> = [
        "div", "dt", "dd", "section", "article", "header", "footer", "aside", "nav", "main", "address", "summary",
        "details", "figcaption", "caption", "center", "form", "fieldset", "legend", "tbody", "thead", "tfoot",
    ]
    private static let styles: [String: SpanStyle] = [
        "strong": .strong, "b": .strong, "em": .emphasis, "i": .emphasis,
        "del": .strike, "s": .strike, "strike": .strike, "code": .code,
    ]

    /// A writer for one parsed `formatted_body`; `mention` names a pill's user (nil: keep the pill's text).
    init(events: [HTMLEvent], mention: @escaping (UserID) -> String?) {
        self.events = events
        self.mention = mention
    }

    /// Walks all events once and returns the body and the pills' users.
    mutating func run() -> StyledText {
        var index = 0
        while index < events.count {
            switch events[index] {
            case .start(let name, let attributes):
                if skipping > 0 {
                    skipping += 1
                } else {
                    start(name, attributes, at: index)
                }
            case .end:
                if skipping > 0 {
                    skipping -= 1
                } else if let frame = frames.popLast() {
                    end(frame)
                }
            case .text(let text):
                if skipping > 0 {
                    break
                } else if preformattedDepth > 0 {
                    preformattedText += text
                } else {
                    builder.append(text)
                }
            }
            index += 1
        }
        return StyledText(body: builder.finish(), mentions: mentions)
    }

    // MARK: Elements

    private mutating func start(_ name: String, _ attributes: [String: String], at index: Int) {
        if Self.dropped.contains(name) {
            skipping = 1
            return
        }
        if preformattedDepth > 0 {
            // Inside `pre` only the text and its line breaks count.
            switch name {
            case "pre":
                preformattedDepth += 1
                frames.append(.preformatted)
            case "br":
                preformattedText += "\n"
                frames.append(.nothing)
            default:
                frames.append(.nothing)
            }
            return
        }
        if let style = Self.styles[name] {
            frames.append(builder.push(style) ? .style : .nothing)
            return
        }
        switch name {
        case "br":
            builder.lineBreak()
            frames.append(.nothing)
        case "a":
            startLink(attributes, at: index)
        case "img":
            builder.append(attributes["alt"] ?? "")
            frames.append(.nothing)
        case "blockquote":
            builder.requestBreak(.paragraph)
            builder.quoteDepth += 1
            frames.append(.quote)
        case "pre":
            builder.requestBreak(.paragraph)
            preformattedDepth = 1
            preformattedText = ""
            frames.append(.preformatted)
        case "ul", "ol":
            builder.requestBreak(lists.isEmpty ? .paragraph : .line)
            let start = name == "ol" ? attributes["start"].flatMap { Int($0.trimmingHTMLWhitespace()) } ?? 1 : 1
            let column = lists.count < Self.maximumListIndentDepth ? builder.indent : lists[lists.count - 1].column
            let clamped = min(max(start, Self.listStartRange.lowerBound), Self.listStartRange.upperBound)
            lists.append(List(ordered: name == "ol", next: clamped, column: column))
            frames.append(.list)
        case "li":
            startListItem()
        case "h1", "h2", "h3", "h4", "h5", "h6":
            builder.requestBreak(.paragraph)
            frames.append(builder.push(.strong) ? .heading : .blockBreak(.paragraph))
        case "tr":
            builder.requestBreak(.line)
            cellsInRow.append(0)
            frames.append(.row)
        case "td", "th":
            if let cells = cellsInRow.last {
                if cells > 0 { builder.appendSeparator("\t") }
                cellsInRow[cellsInRow.count - 1] += 1
            }
            frames.append(.nothing)
        default:
            if Self.paragraphs.contains(name) {
                builder.requestBreak(.paragraph)
                frames.append(.blockBreak(.paragraph))
            } else if Self.lineBlocks.contains(name) {
                builder.requestBreak(.line)
                frames.append(.blockBreak(.line))
            } else {
                frames.append(.nothing)
            }
        }
    }

    private mutating func end(_ frame: Frame) {
        switch frame {
        case .nothing:
            break
        case .style:
            builder.pop()
        case .blockBreak(let kind):
            builder.requestBreak(kind)
        case .quote:
            builder.quoteDepth -= 1
            builder.requestBreak(.paragraph)
        case .list:
            lists.removeLast()
            builder.requestBreak(lists.isEmpty ? .paragraph : .line)
        case .listItem(let previousIndent):
            builder.indent = previousIndent
            builder.pendingMarker = nil
            builder.requestBreak(.line)
        case .preformatted:
            preformattedDepth -= 1
            guard preformattedDepth == 0 else { return }
            var text = Self.normalizingLineEnds(preformattedText)
            if text.hasPrefix("\n") { text.removeFirst() }
            builder.appendPreformatted(text)
            preformattedText = ""
        case .heading:
            builder.pop()
            builder.requestBreak(.paragraph)
        case .row:
            cellsInRow.removeLast()
            builder.requestBreak(.line)
        case .link(let suffix):
            if let suffix { builder.append(suffix) }
        }
    }

    private mutating func startListItem() {
        builder.requestBreak(.line)
        let marker: String
        let column: Int
        if lists.isEmpty {
            marker = "- "
            column = builder.indent
        } else {
            let list = lists[lists.count - 1]
            marker = list.ordered ? "\(list.next). " : "- "
            column = list.column
            lists[lists.count - 1].next += 1
        }
        builder.pendingMarker = (column, marker)
        frames.append(.listItem(previousIndent: builder.indent))
        builder.indent = column + marker.count
    }

    /// Pills become the mention text; other Matrix links their text; external links `text <url>` or `url`, and
    /// nothing when they show nothing.
    private mutating func startLink(_ attributes: [String: String], at index: Int) {
        guard let href = attributes["href"] else {
            frames.append(.link(suffix: nil))
            return
        }
        switch LinkTarget(href: href) {
        case .user(let user):
            if !mentions.contains(user) { mentions.append(user) }
            if let name = mention(user) {
                builder.append(name)
                skipping = 1
            } else {
                frames.append(.link(suffix: nil))
            }
        case .matrixOnly:
            frames.append(.link(suffix: nil))
        case .external(let url):
            let text = visibleText(ofElementAt: index)
            if text.isEmpty {
                // Nothing of it shows in Matrix clients either (but its white space still separates words).
                frames.append(.link(suffix: nil))
            } else if Self.textShowsURL(text, url) {
                builder.append(url)
                skipping = 1
            } else {
                frames.append(.link(suffix: " <\(url)>"))
            }
        }
    }

    /// The collapsed, trimmed text inside the element starting at `index`, images' `alt` included, dropped elements
    /// excluded.
    private func visibleText(ofElementAt index: Int) -> String {
        var depth = 0
        var dropDepth = 0
        var text = ""
        for event in events[index...] {
            switch event {
            case .start(let name, let attributes):
                depth += 1
                if dropDepth > 0 || Self.dropped.contains(name) { dropDepth += 1 }
                if dropDepth == 0, name == "img" { text += " " + (attributes["alt"] ?? "") + " " }
            case .end:
                depth -= 1
                if dropDepth > 0 { dropDepth -= 1 }
            case .text(let string):
                if dropDepth == 0 { text += string }
            }
            if depth == 0 { break }
        }
        let words = text.unicodeScalars.split(whereSeparator: \.isHTMLWhitespace).map(String.init)
        return words.joined(separator: " ")
    }

    /// CR LF and lone CR as LF (libxml2's HTML parser keeps them as they came).
    private static func normalizingLineEnds(_ text: String) -> String {
        guard text.utf8.contains(0x0D) else { return text }
        var result = String.UnicodeScalarView()
        var previousWasCR = false
        for scalar in text.unicodeScalars {
            if scalar == "\r" {
                result.append("\n")
                previousWasCR = true
            } else {
                if !(scalar == "\n" && previousWasCR) { result.append(scalar) }
                previousWasCR = false
            }
        }
        return String(result)
    }

    private static func textShowsURL(_ text: String, _ url: String) -> Bool {
        if text == url || "mailto:" + text == url { return true }
        for scheme in ["https://", "http://"] where url.hasPrefix(scheme) {
            let rest = url.dropFirst(scheme.count)
            if text == rest || text + "/" == rest { return true }
        }
        return false
    }
}
