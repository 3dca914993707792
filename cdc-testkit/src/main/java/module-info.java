/**
 * Test support for users of datum-cdc and for checkpoint-store authors: {@link
 * io.datum.cdc.testkit.EmbeddedPostgresTest}, a JUnit 5 extension giving a test class a real
 * PostgreSQL, and {@link io.datum.cdc.testkit.CheckpointStoreConformanceKit}, the suite every store
 * passes.
 */
module io.datum.cdc.testkit {
  requires transitive io.datum.cdc.api;
  requires transitive io.datum.cdc.embedded;
  requires transitive org.junit.jupiter.api;
  requires org.junit.platform.commons;

  exports io.datum.cdc.testkit;

  // JUnit runs the kit's test methods and creates the extension reflectively
  opens io.datum.cdc.testkit;
}
