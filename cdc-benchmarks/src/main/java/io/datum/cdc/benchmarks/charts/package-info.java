/**
 * {@link io.datum.cdc.benchmarks.charts.BenchmarkCharts}: renders the JSON results kept under
 * {@code docs/benchmark-results} (end-to-end harness, coordinator JMH run) to the PNG charts in
 * {@code docs}. Not a benchmark; a plain main in {@code benchmarks.jar}.
 */
package io.datum.cdc.benchmarks.charts;
