package io.datum.cdc.samples.spring;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.UpdateEvent;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * Prints every change of a PostgreSQL. Without {@code datum.cdc.jdbc-url} it starts an embedded
 * PostgreSQL 17, creates a table {@code sample_orders} and a publication, and writes a few rows.
 */
@SpringBootApplication
public class SampleApplication {

  private static EmbeddedPostgresServer embedded;
  private final AtomicInteger seen = new AtomicInteger();

  /**
   * Starts the application (and an embedded PostgreSQL when no JDBC URL is configured).
   *
   * @param args Spring Boot arguments, e.g. {@code --datum.cdc.jdbc-url=...}
   * @throws SQLException if the embedded server cannot be prepared
   * @throws java.io.IOException if the store's directory cannot be created
   */
  public static void main(String[] args) throws SQLException, java.io.IOException {
    SpringApplication app = new SpringApplication(SampleApplication.class);
    boolean configured =
        System.getenv("DATUM_CDC_JDBC_URL") != null
            || System.getProperty("datum.cdc.jdbc-url") != null
            || java.util.Arrays.stream(args).anyMatch(a -> a.startsWith("--datum.cdc.jdbc-url"));
    if (!configured) {
      embedded = EmbeddedPostgresServer.builder().start();
      embedded.execute(
          "CREATE TABLE sample_orders (id int PRIMARY KEY, item text, qty int)",
          "CREATE PUBLICATION sample FOR TABLE sample_orders");
      System.setProperty("datum.cdc.jdbc-url", embedded.jdbcUrl());
      System.setProperty("datum.cdc.user", embedded.user());
      System.setProperty("datum.cdc.password", embedded.password());
      // a fresh server each run, so a fresh store: a store kept from an earlier run names another
      // cluster and is refused. Inside the server's temporary directory, which closing it deletes
      System.setProperty(
          "datum.cdc.checkpoint-store",
          "file:" + embedded.baseDirectory().resolve("checkpoints").toAbsolutePath());
      System.err.println("sample: started an embedded PostgreSQL at " + embedded.jdbcUrl());
      System.err.println(
          "sample: sample_orders has the default REPLICA IDENTITY (its primary key): an update's"
              + " before image is null and a delete carries only the key (ALTER TABLE ..."
              + " REPLICA IDENTITY FULL sends the whole old row)");
      // one hook, in order: the context (the source stops and stores its watermark), then the
      // server and its directory
      app.setRegisterShutdownHook(false);
    }
    ConfigurableApplicationContext context;
    try {
      context = app.run(args);
    } catch (RuntimeException e) {
      if (embedded != null) {
        embedded.close();
      }
      throw e;
    }
    if (embedded != null) {
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    context.close();
                    embedded.close();
                  },
                  "sample-stop"));
    }
  }

  /**
   * The handler the starter runs the source with: prints each event and acknowledges it.
   *
   * @param context to close after {@code sample.stop-after} events (0: run until stopped)
   * @param stopAfter how many events to print before exiting
   * @return the handler
   */
  @Bean
  CdcHandler printer(
      ConfigurableApplicationContext context, @Value("${sample.stop-after:0}") int stopAfter) {
    return (event, checkpoints) -> {
      // counted before printing: the exit runs on another thread while the source may still
      // deliver, and what comes after the N-th event is neither printed nor acknowledged
      int n = seen.incrementAndGet();
      if (stopAfter > 0 && n > stopAfter) {
        return;
      }
      System.out.println("change: " + describe(event));
      checkpoints.acknowledge(event.offset());
      if (n == stopAfter) {
        new Thread(() -> System.exit(SpringApplication.exit(context)), "sample-exit").start();
      }
    };
  }

  /**
   * With the embedded server, writes a few changes once the source streams.
   *
   * @return the runner
   */
  @Bean
  ApplicationRunner workload() {
    return args -> {
      if (embedded == null) {
        return;
      }
      embedded.execute(
          "INSERT INTO sample_orders VALUES (1, 'apple', 3), (2, 'pear', 1)",
          "UPDATE sample_orders SET qty = 5 WHERE id = 1",
          "DELETE FROM sample_orders WHERE id = 2");
    };
  }

  private static String describe(ChangeEvent event) {
    if (event instanceof UpdateEvent update && update.before() == null) {
      return event + " (before is null: the default replica identity sends no old row)";
    }
    if (event instanceof DeleteEvent) {
      return event + " (the before image holds only the key: the default replica identity)";
    }
    return event.toString();
  }
}
