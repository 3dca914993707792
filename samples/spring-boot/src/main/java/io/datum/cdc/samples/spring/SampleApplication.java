package io.datum.cdc.samples.spring;

import io.datum.cdc.CdcHandler;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
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
      // cluster and is refused
      System.setProperty(
          "datum.cdc.checkpoint-store",
          "file:" + java.nio.file.Files.createTempDirectory("datum-cdc-sample"));
      Runtime.getRuntime().addShutdownHook(new Thread(embedded::close, "embedded-postgres-stop"));
      System.err.println("sample: started an embedded PostgreSQL at " + embedded.jdbcUrl());
    }
    app.run(args);
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
      System.out.println("change: " + describe(event));
      checkpoints.acknowledge(event.offset());
      if (seen.incrementAndGet() == stopAfter) {
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
    return event.toString();
  }
}
