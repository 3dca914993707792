package io.datum.cdc.testkit;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a JUnit 5 test class with {@link EmbeddedPostgresExtension}: one {@link
 * EmbeddedPostgresServer} (PostgreSQL 17, or the {@link #version()} given, set up for logical
 * replication) is started for the class the first time a test constructor, a lifecycle method or a
 * test method declares a parameter of type {@link EmbeddedPostgresServer}, is given to every such
 * parameter in the class (and its {@code @Nested} classes), and is closed after the class.
 *
 * <pre>{@code
 * @EmbeddedPostgresTest(settings = "logical_decoding_work_mem=64kB")
 * class OrdersCaptureTest {
 *
 *     @BeforeAll
 *     static void schema(EmbeddedPostgresServer pg) throws SQLException {
 *         pg.execute("CREATE TABLE orders (id int PRIMARY KEY, note text)",
 *                    "CREATE PUBLICATION orders_pub FOR TABLE orders");
 *     }
 *
 *     @Test
 *     void capturesInserts(EmbeddedPostgresServer pg) throws Exception {
 *         try (Connection c = pg.getConnection()) { ... }
 *     }
 * }
 * }</pre>
 *
 * <p><b>No fsync.</b> The server runs with {@code fsync=off}, unlike {@link
 * EmbeddedPostgresServer#builder()}'s: a test crashes PostgreSQL, the JVM or a child process, never
 * the machine, and a committed transaction survives all of those in the kernel's page cache ({@code
 * synchronous_commit} stays on), so flushing it to disk only costs time; the server also starts
 * from a copy of a cluster {@code initdb} made once per machine. {@code settings = "fsync=on"}
 * turns it back on.
 *
 * <p><b>Other PostgreSQL versions.</b> {@code @EmbeddedPostgresTest(version = 16)} runs the class
 * on PostgreSQL 16 instead. To run one class on several versions, one after the other, add {@link
 * EmbeddedPostgresVersions}; its versions replace {@link #version()}, the settings here still apply
 * to every version:
 *
 * <pre>{@code
 * @EmbeddedPostgresVersions({14, 15, 16, 17, 18})   // or just @EmbeddedPostgresVersions: all of them
 * @EmbeddedPostgresTest(settings = "logical_decoding_work_mem=64kB")
 * class SlotOnEveryVersionTest {
 *     @Test
 *     void createsSlot(EmbeddedPostgresServer pg) throws SQLException {
 *         assertEquals(pg.majorVersion(), Integer.parseInt(pg.queryString("SHOW server_version_num")) / 10000);
 *     }
 * }
 * }</pre>
 *
 * <p>Versions other than 17 need a test-scope dependency on {@code
 * io.datum.cdc:cdc-testkit-postgres-binaries} (Linux x86_64); without it the server cannot start
 * and the parameter's resolution fails with a message that says so. Settings must exist in every
 * version the class runs on.
 *
 * <p>The class is tagged {@code postgres} (JUnit's {@link Tag}, inherited), so that a build can run
 * the classes that start PostgreSQL apart from its unit tests: this project's build leaves them out
 * of {@code ./mvnw test} (surefire's {@code excludedGroups}) and runs them in {@code ./mvnw verify}
 * (failsafe's {@code groups}).
 *
 * <p>It may also be used as a meta-annotation on an annotation of your own.
 *
 * @see EmbeddedPostgresExtension
 * @see EmbeddedPostgresVersions
 */
@Target({ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag("postgres")
@ExtendWith(EmbeddedPostgresExtension.class)
public @interface EmbeddedPostgresTest {

  /**
   * Extra server settings, each {@code "name=value"} (the value is what follows the first {@code
   * =}, spaces kept), as {@link EmbeddedPostgresServer.Builder#setting(String, String)} takes them;
   * they override the defaults.
   *
   * @return the settings; empty by default
   */
  String[] settings() default {};

  /**
   * The PostgreSQL major version of the class's server, as {@link
   * EmbeddedPostgresServer.Builder#majorVersion(int)} takes it. Ignored when the class also has
   * {@link EmbeddedPostgresVersions}.
   *
   * @return the major version; {@value EmbeddedPostgresServer#DEFAULT_MAJOR_VERSION} by default
   */
  int version() default EmbeddedPostgresServer.DEFAULT_MAJOR_VERSION;

  /**
   * The server's {@code wal_sender_timeout} in milliseconds; 0 disables it.
   *
   * @return the timeout in milliseconds; 60000 by default
   */
  long walSenderTimeoutMillis() default 60_000L;

  /**
   * How long a {@linkplain EmbeddedPostgresServer.ShutdownMode#FAST fast} shutdown of the class's
   * server (by {@link EmbeddedPostgresServer#stop()}, {@link EmbeddedPostgresServer#restart()} or
   * at the end of the class) may take before it is made an immediate one, in milliseconds, as
   * {@link EmbeddedPostgresServer.Builder#shutdownTimeout(java.time.Duration)} takes it. A fast
   * shutdown waits until every walsender's client confirmed what it was sent, which a client that
   * cannot acknowledge never does.
   *
   * @return the timeout in milliseconds, positive; 30000 by default
   */
  long shutdownTimeoutMillis() default 30_000L;
}
