package io.thallus.benchmarks;

import io.thallus.cli.sidebyside.PeerResult;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * PNG plots shaped like the paper's figures: time per transport and speedup over ipc, against result size and
 * column count, for both settings; and the headline throughput as bars. Ceilings appear in the time plots only:
 * their speedups (memcpy is hundreds of times ipc on small results) would flatten every other line.
 */
final class Plots {
  private static final int WIDTH = 900;
  private static final int HEIGHT = 560;

  private Plots() {}

  static void write(Path folder, List<Point> points, List<String> transports) throws IOException {
    List<String> contenders = new ArrayList<>(transports);
    contenders.add(Fixture.FLIGHT);
    for (String setting : List.of(Point.TRANSPORT_ONLY, Point.END_TO_END)) {
      String slug = setting.replace(' ', '-');
      List<String> withCeilings = new ArrayList<>(contenders);
      withCeilings.addAll(setting.equals(Point.TRANSPORT_ONLY) ? List.of("raw socket", "memcpy")
          : List.of(Fixture.DUCKDB, Fixture.PLAIN_DUCKDB));
      for (String axis : List.of("rows", "columns")) {
        List<Point> sweep = points.stream().filter(p -> p.experiment().equals(axis) && p.setting().equals(setting))
            .toList();
        String xTitle = axis.equals("rows") ? "result rows (8 BIGINT columns)" : "columns selected (BIGINT)";
        save(line(setting + ": time vs " + axis, xTitle, "median seconds", axis.equals("rows"), true, sweep,
            withCeilings, axis, (point, name) -> point.median(name)), folder.resolve(slug + "-time-vs-" + axis));
        save(line(setting + ": speedup over ipc vs " + axis, xTitle, "x ipc (higher is faster)", axis.equals("rows"),
            false, sweep, contenders, axis, (point, name) -> point.speedup(name, "ipc")),
            folder.resolve(slug + "-speedup-vs-" + axis));
      }
    }
    Point headline = points.stream().filter(p -> p.experiment().equals("headline")).findFirst().orElseThrow();
    CategoryChart bars = new CategoryChartBuilder().width(WIDTH).height(HEIGHT)
        .title(String.format(java.util.Locale.ROOT, "Transport only, %,d rows x 8 BIGINT, %,d-row batches",
            headline.rows(), headline.batchRows()))
        .xAxisTitle("peer").yAxisTitle("GB/s (median)").build();
    bars.getStyler().setLegendVisible(false);
    bars.getStyler().setLabelsVisible(true);
    bars.getStyler().setDecimalPattern("#0.00");
    bars.getStyler().setXAxisLabelRotation(20);
    List<String> names = headline.peers().stream().map(PeerResult::name).toList();
    bars.addSeries("GB/s", names, names.stream().map(headline::gigabytesPerSecond).toList());
    save(bars, folder.resolve("headline-throughput"));
  }

  private interface Metric {
    double of(Point point, String name);
  }

  private static XYChart line(String title, String xTitle, String yTitle, boolean logX, boolean logY,
      List<Point> sweep, List<String> names, String axis, Metric metric) {
    XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
        .yAxisTitle(yTitle).build();
    chart.getStyler().setXAxisLogarithmic(logX);
    chart.getStyler().setYAxisLogarithmic(logY);
    chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
    ToDoubleFunction<Point> x = axis.equals("rows") ? Point::rows : Point::columns;
    for (String name : names) {
      List<Double> xs = new ArrayList<>();
      List<Double> ys = new ArrayList<>();
      for (Point point : sweep) {
        double y = metric.of(point, name);
        if (Double.isFinite(y) && y > 0) {
          xs.add(x.applyAsDouble(point));
          ys.add(y);
        }
      }
      if (!xs.isEmpty()) {
        chart.addSeries(name, xs, ys);
      }
    }
    return chart;
  }

  private static void save(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, Path file) throws IOException {
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
  }
}
