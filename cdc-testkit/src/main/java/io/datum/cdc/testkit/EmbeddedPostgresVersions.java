package io.datum.cdc.testkit;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.ClassTemplate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a JUnit 5 test class once per PostgreSQL major version, each time with an {@link
 * EmbeddedPostgresServer} of that version: the class is a JUnit {@link ClassTemplate}, and {@link
 * EmbeddedPostgresExtension} provides one invocation per version, in the order given, displayed as
 * {@code PostgreSQL 14}, {@code PostgreSQL 15} and so on.
 *
 * <p>Within one invocation: one server of that version is started lazily, the first time a test
 * constructor, a {@code @BeforeEach} or {@code @AfterEach} method or a test method declares a
 * parameter of type {@link EmbeddedPostgresServer}; every such parameter of the invocation,
 * {@code @Nested} classes included, gets that server; it is closed, its data deleted, when the
 * invocation is done, before the next version's starts. So one server runs at a time, and each
 * (class, version) pair starts one. {@link EmbeddedPostgresServer#majorVersion()} tells a test
 * which version it runs on. Another extension can get the invocation's server in its {@code
 * BeforeClassTemplateInvocationCallback} with {@link EmbeddedPostgresExtension#server}.
 *
 * <p><b>{@code @BeforeAll} and {@code @AfterAll}</b> run once for the whole class, before the first
 * version and after the last (JUnit's class template rule), so they cannot take the server: such a
 * parameter fails to resolve with a message saying so. Set a version's schema up in the constructor
 * or a {@code @BeforeEach} (idempotently: {@code CREATE TABLE IF NOT EXISTS}), or in each test.
 * Where a per-version {@code @BeforeAll} is needed, write an abstract test class and one small
 * subclass per version with {@code @EmbeddedPostgresTest(version = N)} instead. The invocations of
 * a class run one after the other; running them in parallel is refused.
 *
 * <pre>{@code
 * @EmbeddedPostgresVersions({14, 15, 16, 17, 18})
 * class SlotOnEveryVersionTest {
 *     @Test
 *     void slotDeliversChanges(EmbeddedPostgresServer pg) throws Exception {
 *         pg.execute("CREATE TABLE t (id int PRIMARY KEY)", "CREATE PUBLICATION p FOR TABLE t");
 *         if (pg.majorVersion() >= 15) { ... }   // what differs between versions
 *     }
 * }
 * }</pre>
 *
 * <p>Server settings and {@code wal_sender_timeout} come from an {@link EmbeddedPostgresTest} on
 * the same class, if there is one (its {@link EmbeddedPostgresTest#version() version} is then
 * ignored); they must exist in every version listed. Not for classes that register {@link
 * EmbeddedPostgresExtension} with {@code @RegisterExtension}: give that builder a {@link
 * EmbeddedPostgresServer.Builder#majorVersion(int) majorVersion} and write a class per version.
 *
 * <p>Versions other than {@value EmbeddedPostgresServer#DEFAULT_MAJOR_VERSION} need a test-scope
 * dependency on {@code io.datum.cdc:cdc-testkit-postgres-binaries} (PostgreSQL 14, 15, 16 and 18
 * for Linux x86_64, about 58 MB):
 *
 * <pre>{@code
 * <dependency>
 *   <groupId>io.datum.cdc</groupId>
 *   <artifactId>cdc-testkit-postgres-binaries</artifactId>
 *   <scope>test</scope>
 * </dependency>
 * }</pre>
 *
 * <p>Without it the invocations of those versions fail with a message that names it. Each version
 * starts its own server, about a second or two each after the first unpacking on a machine, so
 * running a whole suite on every version multiplies its time: keep multi-version classes to what
 * differs between versions.
 *
 * <p>Like {@link EmbeddedPostgresTest}, it tags the class {@code postgres}.
 *
 * @see EmbeddedPostgresTest
 * @see EmbeddedPostgresServer#SUPPORTED_MAJOR_VERSIONS
 */
@Target({ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag("postgres")
@ClassTemplate
@ExtendWith(EmbeddedPostgresExtension.class)
public @interface EmbeddedPostgresVersions {

  /**
   * The PostgreSQL major versions to run the class on, in this order; each at most once, each as
   * {@link EmbeddedPostgresServer.Builder#majorVersion(int)} takes it.
   *
   * @return the versions; empty (the default) means every one of {@link
   *     EmbeddedPostgresServer#SUPPORTED_MAJOR_VERSIONS}: 14, 15, 16, 17, 18
   */
  int[] value() default {};
}
