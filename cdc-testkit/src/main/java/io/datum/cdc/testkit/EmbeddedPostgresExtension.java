package io.datum.cdc.testkit;

import java.lang.reflect.AnnotatedElement;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * A JUnit 5 extension that gives tests an {@link EmbeddedPostgresServer}: PostgreSQL 17 set up for
 * logical replication ({@code wal_level=logical}, 20 replication slots and walsenders).
 *
 * <p>One server is started per test class, lazily, the first time a parameter of type {@link
 * EmbeddedPostgresServer} is resolved, in a test constructor, a {@code @BeforeAll}, {@code
 * @BeforeEach}, {@code @AfterEach} or {@code @AfterAll} method or a test method. Every such
 * parameter of the class gets the same server. The server is kept in the store of the class's
 * {@link ExtensionContext} and closed, its data deleted, when the class is done (JUnit 5.13 or
 * later closes {@link AutoCloseable} store values). {@code @Nested} classes share the server of
 * their enclosing class. Tests may {@link EmbeddedPostgresServer#restart() restart} it; one that
 * {@linkplain EmbeddedPostgresServer#close() closes} it spoils it for the rest of the class.
 *
 * <p>Declaratively, with the defaults or with the settings of {@link EmbeddedPostgresTest}:
 *
 * <pre>{@code
 * @EmbeddedPostgresTest
 * class SlotTest {
 *     @Test
 *     void createsSlot(EmbeddedPostgresServer pg) throws SQLException {
 *         pg.execute("SELECT pg_create_logical_replication_slot('s', 'pgoutput')");
 *         try (Connection replication = pg.getReplicationConnection("postgres")) { ... }
 *     }
 * }
 * }</pre>
 *
 * <p>Programmatically, with any {@link EmbeddedPostgresServer.Builder} configuration:
 *
 * <pre>{@code
 * class BigTransactionTest {
 *     @RegisterExtension
 *     static final EmbeddedPostgresExtension POSTGRES = new EmbeddedPostgresExtension(
 *             EmbeddedPostgresServer.builder().setting("logical_decoding_work_mem", "64kB"));
 *
 *     @Test
 *     void spills(EmbeddedPostgresServer pg) { ... }
 * }
 * }</pre>
 *
 * <p>Other extensions can get the server with {@link #server(ExtensionContext)}.
 */
public final class EmbeddedPostgresExtension implements ParameterResolver {

  private static final Namespace NAMESPACE = Namespace.create(EmbeddedPostgresExtension.class);
  private static final String KEY = "server";

  private final EmbeddedPostgresServer.Builder builder;

  /**
   * Creates the extension that {@link EmbeddedPostgresTest} and {@code
   * @ExtendWith(EmbeddedPostgresExtension.class)} register; it configures the server from the
   * {@link EmbeddedPostgresTest} annotation of the test class (or of an enclosing class), or with
   * the defaults if there is none.
   */
  public EmbeddedPostgresExtension() {
    this.builder = null;
  }

  /**
   * Creates an extension, for {@code @RegisterExtension}, that configures the server with the
   * given builder; the annotation's settings are then ignored.
   *
   * @param builder the configuration; not {@code null}; it is used when the server starts, so do
   *     not change it afterwards
   */
  public EmbeddedPostgresExtension(EmbeddedPostgresServer.Builder builder) {
    this.builder = Objects.requireNonNull(builder, "builder");
  }

  /**
   * Supports parameters whose type is {@link EmbeddedPostgresServer}.
   *
   * @param parameterContext the parameter; not {@code null}
   * @param extensionContext the context; not {@code null}
   * @return {@code true} if the parameter's type is {@link EmbeddedPostgresServer}
   */
  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.getParameter().getType() == EmbeddedPostgresServer.class;
  }

  /**
   * Returns the server of the test class, starting it if needed.
   *
   * @param parameterContext the parameter; not {@code null}
   * @param extensionContext the context; not {@code null}
   * @return the running server; never {@code null}
   * @throws ParameterResolutionException if the server cannot be started
   */
  @Override
  public EmbeddedPostgresServer resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    try {
      return server(extensionContext);
    } catch (RuntimeException e) {
      throw new ParameterResolutionException("cannot start the embedded PostgreSQL: " + e.getMessage(), e);
    }
  }

  /**
   * Returns the server of the test class of the given context (its own, or that of an enclosing
   * class for a {@code @Nested} class), starting it if needed. For other extensions.
   *
   * @param context any context within a test class; not {@code null}
   * @return the running server; never {@code null}
   * @throws IllegalStateException if the context is not within a test class
   * @throws java.io.UncheckedIOException if the server cannot be started
   */
  public EmbeddedPostgresServer server(ExtensionContext context) {
    ExtensionContext classContext = classContext(context);
    EmbeddedPostgresServer server = classContext.getStore(NAMESPACE)
        .getOrComputeIfAbsent(KEY, key -> newServer(classContext), EmbeddedPostgresServer.class);
    // a test may have stopped it; it is the class's server, so bring it back
    return server.start();
  }

  private EmbeddedPostgresServer newServer(ExtensionContext classContext) {
    EmbeddedPostgresServer.Builder configuration = builder != null
        ? builder
        : fromAnnotation(classContext.getRequiredTestClass());
    return configuration.start();
  }

  private static EmbeddedPostgresServer.Builder fromAnnotation(Class<?> testClass) {
    EmbeddedPostgresServer.Builder configuration = EmbeddedPostgresServer.builder();
    findAnnotation(testClass).ifPresent(annotation -> {
      configuration.walSenderTimeout(Duration.ofMillis(annotation.walSenderTimeoutMillis()));
      for (String setting : annotation.settings()) {
        int equals = setting.indexOf('=');
        if (equals <= 0) {
          throw new IllegalArgumentException(
              "@EmbeddedPostgresTest setting is not name=value: \"" + setting + "\" on " + testClass.getName());
        }
        configuration.setting(setting.substring(0, equals).trim(), setting.substring(equals + 1));
      }
    });
    return configuration;
  }

  private static Optional<EmbeddedPostgresTest> findAnnotation(Class<?> testClass) {
    for (Class<?> c = testClass; c != null; c = c.getEnclosingClass()) {
      AnnotatedElement element = c;
      Optional<EmbeddedPostgresTest> found = AnnotationSupport.findAnnotation(element, EmbeddedPostgresTest.class);
      if (found.isPresent()) {
        return found;
      }
    }
    return Optional.empty();
  }

  /** The nearest enclosing context that is a class's, not a method's or an invocation's. */
  private static ExtensionContext classContext(ExtensionContext context) {
    ExtensionContext current = context;
    while (current.getTestMethod().isPresent()) {
      current = current.getParent().orElseThrow(() -> new IllegalStateException("no class context"));
    }
    if (current.getTestClass().isEmpty()) {
      throw new IllegalStateException("EmbeddedPostgresServer is only available within a test class");
    }
    return current;
  }
}
