import IsthmusMetrics
import Testing

/// The text format, checked against literal expected text (Prometheus exposition format 0.0.4).
struct PrometheusExpositionTests {
    @Test func counterWithLabelsRendersHelpTypeAndSortedSamples() {
        let registry = MetricsRegistry()
        let messages = registry.counter("isthmus_messages_total", help: "Messages bridged.", labels: ["direction", "kind"])
        messages.labels("xmpp_to_matrix", "text").increment(by: 3)
        messages.labels("matrix_to_xmpp", "emote").increment()
        #expect(registry.exposition() == """
            # HELP isthmus_messages_total Messages bridged.
            # TYPE isthmus_messages_total counter
            isthmus_messages_total{direction="matrix_to_xmpp",kind="emote"} 1
            isthmus_messages_total{direction="xmpp_to_matrix",kind="text"} 3

            """)
    }

    @Test func familiesWithoutLabelsShowZeroBeforeAnyUpdate() {
        let registry = MetricsRegistry()
        _ = registry.counter("a_total", help: "A.")
        let gauge = registry.gauge("b", help: "B.")
        gauge.labels().set(2.5)
        #expect(registry.exposition() == """
            # HELP a_total A.
            # TYPE a_total counter
            a_total 0
            # HELP b B.
            # TYPE b gauge
            b 2.5

            """)
    }

    @Test func labelValuesEscapeBackslashQuoteAndNewline() {
        let registry = MetricsRegistry()
        let failures = registry.counter("f_total", help: "Help with \\ and\nnewline.", labels: ["reason"])
        failures.labels("a\\b \"c\"\nd").increment()
        #expect(registry.exposition() == """
            # HELP f_total Help with \\\\ and\\nnewline.
            # TYPE f_total counter
            f_total{reason="a\\\\b \\"c\\"\\nd"} 1

            """)
    }

    @Test func histogramBucketsAreCumulativeWithInfSumAndCount() {
        let registry = MetricsRegistry()
        let latency = registry.histogram("lat_seconds", help: "Latency.", labels: ["direction"], buckets: [0.1, 1, 0.5])
        let histogram = latency.labels("x")
        for value in [0.05, 0.1, 0.3, 0.7, 0.8, 2.0] { histogram.observe(value) }
        #expect(registry.exposition() == """
            # HELP lat_seconds Latency.
            # TYPE lat_seconds histogram
            lat_seconds_bucket{direction="x",le="0.1"} 2
            lat_seconds_bucket{direction="x",le="0.5"} 3
            lat_seconds_bucket{direction="x",le="1"} 5
            lat_seconds_bucket{direction="x",le="+Inf"} 6
            lat_seconds_sum{direction="x"} 3.95
            lat_seconds_count{direction="x"} 6

            """)
    }

    @Test func histogramWithoutLabelsAndDurations() {
        let registry = MetricsRegistry()
        let requests = registry.histogram("d_seconds", help: "D.", buckets: [0.25])
        requests.labels().observe(.milliseconds(250))
        requests.labels().observe(.seconds(1))
        #expect(registry.exposition() == """
            # HELP d_seconds D.
            # TYPE d_seconds histogram
            d_seconds_bucket{le="0.25"} 1
            d_seconds_bucket{le="+Inf"} 2
            d_seconds_sum 1.25
            d_seconds_count 2

            """)
    }

    @Test func numbersFormat() {
        #expect(PrometheusExposition.format(3) == "3")
        #expect(PrometheusExposition.format(-2) == "-2")
        #expect(PrometheusExposition.format(0.005) == "0.005")
        #expect(PrometheusExposition.format(.infinity) == "+Inf")
        #expect(PrometheusExposition.format(-.infinity) == "-Inf")
        #expect(PrometheusExposition.format(.nan) == "NaN")
        #expect(PrometheusExposition.format(1e20) == "1e+20")
    }

    @Test func collectorsAddFamiliesAtScrapeTime() {
        let registry = MetricsRegistry()
        registry.collect {
            [.init(name: "c", help: "C.", kind: .gauge, samples: [.init(labels: [("status", "active")], value: .number(4))])]
        }
        #expect(registry.exposition() == """
            # HELP c C.
            # TYPE c gauge
            c{status="active"} 4

            """)
    }
}
