import IsthmusCommon

/// Matrix → XMPP: an `org.matrix.custom.html` `formatted_body` as an XMPP body with XEP-0393 Message Styling.
///
/// Pure; no I/O; runs on the caller's executor. The HTML is parsed by libxml2's HTML parser (``HTMLParser``) and
/// walked without recursion. How elements map, following the Matrix client-server API "m.room.message msgtypes"
/// (`m.text`, the HTML subset) and XEP-0393 "Business Rules":
///
/// | HTML | XEP-0393 body |
/// | --- | --- |
/// | `strong`, `b`, `h1`–`h6` | `*x*` (a heading on its own line) |
/// | `em`, `i` | `_x_` |
/// | `del`, `s`, `strike` | `~x~` |
/// | `code` | `` `x` `` (nothing else styled inside) |
/// | `pre` (and `pre > code`) | "```" line, the text verbatim, "```" line |
/// | `blockquote` | `> ` before each line; nested: `> > ` |
/// | `ul > li`, `ol > li` | `- item`, `1. item` (`ol start` honoured); nested lists indented under the item's text |
/// | `a href=U` | `text <U>`; just `U` when the text is `U` (or `U` without its `http(s)://` / `mailto:`); nothing when empty |
/// | user pill `a href="https://matrix.to/#/@u:s"` | `mention(@u:s)`, else the link text; listed in ``StyledText/mentions`` |
/// | other matrix.to / `matrix:` / `mxc:` links, or targets holding a Matrix id | the link text only |
/// | `img` | its `alt` text |
/// | `span data-mx-spoiler` | its text (XEP-0393 has no spoiler; XEP-0382 hides whole messages only) |
/// | `p`, `div`, `br`, `tr`, other blocks | line breaks (a blank line around paragraphs, quotations, lists, code) |
/// | `td`, `th` | separated by a tab |
/// | `mx-reply`, `script`, `style`, `head`, `title`, `template`, `textarea`, `option`, `noscript` | dropped with their content |
/// | anything else | its text |
///
/// Where the XEP leaves choices (see ``InlineRenderer``): a span's directives are written only where a receiving
/// client will parse them back as that span; otherwise its text is kept plain (`a<b>b</b>c` → `abc`). XEP-0393 has
/// no escape, so text that already looks like styling (`*a*`, a line starting with `>`) is styled by XMPP clients.
///
/// Bounds: nothing recurses on the input's nesting (libxml2 reports elements as a flat stream; the walk keeps its own
/// stacks). At most 32 `> ` are written before a line, and lists nested deeper than 8 are not indented further, so a
/// line's prefix stays short however deep the input nests; `ol start` is clamped to -1,000,000…1,000,000,000.
public enum HTMLToStyling {
    /// Converts `html` (a Matrix `formatted_body`). `mention` gives the text shown for a pill's user (the bridge
    /// passes the user's MUC nick); when it returns nil the pill's own text is kept. A Matrix id, `mxc://` URI or
    /// matrix.to link appears in the body only if it was part of the visible text.
    public static func convert(_ html: String, mention: (UserID) -> String?) -> StyledText {
        let events = HTMLParser.events(html)
        return withoutActuallyEscaping(mention) { mention in
            var writer = StylingWriter(events: events, mention: mention)
            return writer.run()
        }
    }
}
