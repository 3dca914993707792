package io.datum.cdc.benchmarks.prometheus;

import com.fasterxml.jackson.databind.JsonNode;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Draws {@link PrometheusDemo}'s series, as Prometheus returned them, one panel each over a shared
 * time axis, with the workload's phases marked.
 */
final class PrometheusChart {

  private static final int WIDTH = 1100;
  private static final int HEIGHT = 760;

  private PrometheusChart() {}

  /** One panel: the series key in the result, its axis label, and a divisor for the unit. */
  private record Panel(String key, String label, double divisor, Color color) {}

  private static final Panel[] PANELS = {
    new Panel("lagBytes", "replication lag (MiB)", 1024 * 1024, new Color(0xd62728)),
    new Panel("eventsPerSecond", "events delivered / s", 1, new Color(0x1f77b4)),
    new Panel("watermarkAgeSeconds", "watermark age (s)", 1, new Color(0x2ca02c)),
  };

  /**
   * Renders the chart to a PNG file.
   *
   * @param result the demo's result (series and phases)
   * @param png the file to write
   * @throws IOException if it cannot be written
   */
  static void draw(JsonNode result, Path png) throws IOException {
    System.setProperty("java.awt.headless", "true");
    CombinedDomainXYPlot plot = new CombinedDomainXYPlot(new NumberAxis("seconds since start"));
    plot.setGap(12);
    for (Panel panel : PANELS) {
      JsonNode points = result.path("series").path(panel.key());
      if (points.isMissingNode() || points.isNull()) {
        continue;
      }
      XYSeries series = new XYSeries(panel.label());
      for (JsonNode p : points) {
        double v = p.get(1).asDouble();
        if (!Double.isNaN(v)) {
          series.add(p.get(0).asDouble(), v / panel.divisor());
        }
      }
      XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
      renderer.setSeriesPaint(0, panel.color());
      renderer.setSeriesStroke(0, new BasicStroke(2f));
      NumberAxis axis = new NumberAxis(panel.label());
      axis.setAutoRangeIncludesZero(true);
      XYPlot sub = new XYPlot(new XYSeriesCollection(series), null, axis, renderer);
      sub.setBackgroundPaint(Color.WHITE);
      sub.setRangeGridlinePaint(Color.LIGHT_GRAY);
      sub.setDomainGridlinePaint(Color.LIGHT_GRAY);
      boolean first = plot.getSubplots().isEmpty();
      for (JsonNode phase : result.path("phases")) {
        ValueMarker marker = new ValueMarker(phase.get("at").asDouble());
        marker.setPaint(Color.GRAY);
        marker.setStroke(
            new BasicStroke(
                1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1f, new float[] {4f, 4f}, 0f));
        if (first) {
          marker.setLabel(phase.get("name").asText());
          marker.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
          marker.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
          marker.setLabelTextAnchor(TextAnchor.TOP_LEFT);
        }
        sub.addDomainMarker(marker);
      }
      plot.add(sub, 1);
    }
    JFreeChart chart = new JFreeChart(null, JFreeChart.DEFAULT_TITLE_FONT, plot, false);
    chart.setBackgroundPaint(Color.WHITE);
    chart.addSubtitle(
        new TextTitle(
            "pgcdc stream --metrics-port, scraped every "
                + result.path("scrapeIntervalSeconds").asInt()
                + " s by "
                + result.path("prometheus").asText()
                + "; "
                + result.path("rowsPerSecond").asInt()
                + " rows/s while writing",
            new Font(Font.SANS_SERIF, Font.PLAIN, 13)));
    chart.setTitle(
        new TextTitle(
            "Lag, rate and watermark age as Prometheus recorded them",
            new Font(Font.SANS_SERIF, Font.BOLD, 16)));
    ChartUtils.saveChartAsPNG(png.toFile(), chart, WIDTH, HEIGHT);
  }
}
