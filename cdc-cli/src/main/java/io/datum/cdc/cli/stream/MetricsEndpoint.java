package io.datum.cdc.cli.stream;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.SlotStatus;
import io.datum.cdc.core.config.SourceState;
import io.datum.cdc.micrometer.PgCdcSourceMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code pgcdc stream --metrics-port}: serves the source's meters (those of {@link
 * PgCdcSourceMetrics}, plus the JVM's) in Prometheus' text format at {@code /metrics}, and the
 * source's health as JSON at {@code /health}, on the JDK's HTTP server with one thread. The meters
 * are read when scraped: nothing is added to the per-event path.
 *
 * <p>{@code /health} answers 200 with {@code "status":"UP"} while the source streams, 200 with
 * {@code UNKNOWN} while it starts, 503 with {@code OUT_OF_SERVICE} while it reconnects or stops,
 * and 503 with {@code DOWN} once it failed or the slot's {@code wal_status} is {@code lost} (Spring
 * Boot's mapping of the same statuses). Beside the status: the state, slot, publication, watermark,
 * lag in bytes, whether a walsender streams from the slot, and its {@code wal_status} (PostgreSQL
 * docs, the pg_replication_slots view), from the same cached read as {@code /metrics}.
 */
final class MetricsEndpoint implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(MetricsEndpoint.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Prometheus' text exposition format 0.0.4 (prometheus.io, Exposition formats). */
  static final String TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";

  /** OpenMetrics 1.0 text, which Prometheus asks for first in its Accept header. */
  static final String OPENMETRICS_FORMAT =
      "application/openmetrics-text; version=1.0.0; charset=utf-8";

  private final PrometheusMeterRegistry registry;
  private final HttpServer server;
  private final ExecutorService executor;
  private final JvmGcMetrics gc;
  private final Duration lagInterval;
  private volatile PgCdcSource source;
  private PgCdcSourceMetrics metrics; // guarded by this

  private MetricsEndpoint(
      PrometheusMeterRegistry registry,
      HttpServer server,
      ExecutorService executor,
      JvmGcMetrics gc,
      Duration lagInterval) {
    this.registry = registry;
    this.server = server;
    this.executor = executor;
    this.gc = gc;
    this.lagInterval = lagInterval;
  }

  /**
   * Starts serving on {@code host:port}.
   *
   * @param host the address to listen on (a host name or IP literal; {@code 0.0.0.0} for all)
   * @param port 1 to 65535, or 0 for a free port ({@link #port()} tells which)
   * @param slot the slot, for the thread's name
   * @param lagInterval how often at most the lag is read from the server
   * @return the running endpoint
   * @throws CdcConfigurationException if the port is taken or the address cannot be bound, naming
   *     both
   */
  static MetricsEndpoint start(String host, int port, String slot, Duration lagInterval) {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    HttpServer server;
    InetSocketAddress address = new InetSocketAddress(host, port);
    try {
      if (address.isUnresolved()) {
        throw new IOException("unknown host");
      }
      server = HttpServer.create(address, 16);
    } catch (IOException e) {
      registry.close();
      throw new CdcConfigurationException(
          "--metrics-port "
              + port
              + " on --metrics-address "
              + host
              + ": cannot listen there ("
              + (e instanceof BindException ? "in use, or not an address of this host: " : "")
              + e.getMessage()
              + ")",
          e);
    }
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    ExecutorService executor =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "pgcdc-metrics-" + slot);
              t.setDaemon(true);
              return t;
            });
    MetricsEndpoint endpoint = new MetricsEndpoint(registry, server, executor, gc, lagInterval);
    server.createContext("/metrics", endpoint::metrics);
    server.createContext("/health", endpoint::health);
    server.setExecutor(executor);
    server.start();
    return endpoint;
  }

  /** The registry served, for meters beside the source's (the timed checkpoint store). */
  PrometheusMeterRegistry registry() {
    return registry;
  }

  /** The port listened on (the one chosen when started with 0). */
  int port() {
    return server.getAddress().getPort();
  }

  /**
   * Shows {@code next}'s meters from now on, in place of the previous source's (a start retried
   * builds a new source).
   *
   * @param next the source, not started yet or running
   */
  synchronized void bind(PgCdcSource next) {
    if (metrics != null) {
      metrics.close();
      for (Meter m : registry.getMeters()) {
        if (m.getId().getName().startsWith("datum.cdc.")) {
          registry.remove(m);
        }
      }
    }
    metrics = PgCdcSourceMetrics.builder(next).lagInterval(lagInterval).build();
    metrics.bindTo(registry);
    source = next;
  }

  /** Answers 404 unless the path is exactly {@code path} (contexts match by prefix). */
  private static boolean notFound(HttpExchange exchange, String path) throws IOException {
    if (exchange.getRequestURI().getPath().equals(path)) {
      return false;
    }
    send(
        exchange,
        404,
        "text/plain; charset=utf-8",
        "not found: try /metrics or /health\n".getBytes(StandardCharsets.UTF_8));
    return true;
  }

  private void metrics(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (notFound(exchange, "/metrics")) {
        return;
      }
      if (!"GET".equals(exchange.getRequestMethod())
          && !"HEAD".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      String accept = exchange.getRequestHeaders().getFirst("Accept");
      String type =
          accept != null && accept.contains("application/openmetrics-text")
              ? OPENMETRICS_FORMAT
              : TEXT_FORMAT;
      byte[] body = registry.scrape(type).getBytes(StandardCharsets.UTF_8);
      send(exchange, 200, type, body);
    } catch (RuntimeException e) {
      LOG.warn("cannot answer {}: {}", exchange.getRequestURI(), e.toString(), e);
      throw e;
    }
  }

  private void health(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (notFound(exchange, "/health")) {
        return;
      }
      PgCdcSource running = source;
      ObjectNode body = JSON.createObjectNode();
      SourceState state = running == null ? SourceState.NEW : running.state();
      String status =
          switch (state) {
            case SNAPSHOTTING, STREAMING -> "UP";
            case NEW, STARTING -> "UNKNOWN";
            case RECONNECTING, STOPPING, STOPPED -> "OUT_OF_SERVICE";
            case FAILED -> "DOWN";
          };
      body.put("state", state.name().toLowerCase(Locale.ROOT));
      if (running != null) {
        body.put("slot", running.slot());
        body.put("publication", running.publication());
        body.put("watermark", running.watermark().toString());
        body.put("snapshotInProgress", running.snapshotInProgress());
        // the binder's gauges: one cached read of pg_replication_slots, shared with /metrics
        double bytes = gauge("datum.cdc.replication.lag", null);
        if (Double.isNaN(bytes)) {
          body.putNull("lagBytes");
        } else {
          body.put("lagBytes", (long) bytes);
        }
        double active = gauge("datum.cdc.slot.active", null);
        if (Double.isNaN(active)) {
          body.putNull("slotActive");
        } else {
          body.put("slotActive", active == 1);
        }
        String walStatus = null;
        for (SlotStatus.WalStatus s : SlotStatus.WalStatus.values()) {
          String name = s.name().toLowerCase(Locale.ROOT);
          if (gauge("datum.cdc.slot.wal.status", name) == 1) {
            walStatus = name;
          }
        }
        body.put("walStatus", walStatus);
        // on a hot standby: how far its replay trails its primary (NaN on a primary: left out)
        double replay = gauge("datum.cdc.standby.replay.lag", null);
        if (!Double.isNaN(replay)) {
          body.put("standbyReplayLagBytes", (long) replay);
        }
        if ("lost".equals(walStatus)) {
          status = "DOWN"; // the server removed WAL the slot needs: it can never resume
        }
      }
      body.put("status", status);
      int code = status.equals("UP") || status.equals("UNKNOWN") ? 200 : 503;
      byte[] bytes = JSON.writeValueAsBytes(body);
      send(exchange, code, "application/json", bytes);
    }
  }

  /** A gauge's value, NaN if it is not registered (yet). */
  private double gauge(String name, String status) {
    var search = registry.find(name);
    if (status != null) {
      search = search.tag("status", status);
    }
    Gauge g = search.gauge();
    return g == null ? Double.NaN : g.value();
  }

  private static void send(HttpExchange exchange, int code, String type, byte[] body)
      throws IOException {
    exchange.getResponseHeaders().set("Content-Type", type);
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(code, head ? -1 : body.length);
    if (!head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  /** Stops serving and closes the lag connection. Idempotent. */
  @Override
  public synchronized void close() {
    server.stop(0);
    executor.shutdownNow();
    if (metrics != null) {
      metrics.close();
    }
    gc.close();
    registry.close();
  }
}
