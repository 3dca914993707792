package io.datum.cdc.testkit;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.BeforeClassTemplateInvocationCallback;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContext;
import org.junit.jupiter.api.extension.ClassTemplateInvocationContextProvider;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * A JUnit 5 extension that gives tests an {@link EmbeddedPostgresServer}: PostgreSQL 17 (or the
 * version asked for) set up for logical replication ({@code wal_level=logical}, 20 replication
 * slots and walsenders).
 *
 * <p>One server is started per test class, lazily, the first time a parameter of type {@link
 * EmbeddedPostgresServer} is resolved, in a test constructor, a {@code @BeforeAll},
 * {@code @BeforeEach}, {@code @AfterEach} or {@code @AfterAll} method or a test method. Every such
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
 * <p>On several PostgreSQL versions, one after the other, with {@link EmbeddedPostgresVersions}:
 * this extension is then also the {@link ClassTemplateInvocationContextProvider} of the class, with
 * one invocation per version, and each invocation has its own server of its version.
 *
 * <p><b>Choosing versions from the command line.</b> The system property {@value
 * #VERSIONS_PROPERTY}, a comma-separated list of major versions such as {@code 16} or {@code
 * 14,18}, narrows what runs: an {@link EmbeddedPostgresVersions} class runs on those of its
 * versions that are listed, in its own order (on none if it lists none of them); a class configured
 * by {@link EmbeddedPostgresTest} (or the defaults) runs on its own version if that is listed, else
 * on the first listed one; one that registers the extension with a builder runs as the builder
 * says. Unset, every class runs as its annotations say. For example {@code ./mvnw verify -pl
 * cdc-core -am -Dit.test=PgVersionMatrixTest -Ddatum.cdc.postgres.versions=16}.
 *
 * <p>Other extensions can get the server with {@link #server(ExtensionContext)}.
 */
public final class EmbeddedPostgresExtension
    implements ParameterResolver,
        ClassTemplateInvocationContextProvider,
        BeforeClassTemplateInvocationCallback,
        AfterClassTemplateInvocationCallback {

  /**
   * The system property that narrows the PostgreSQL versions test classes run on; see the class
   * description.
   */
  public static final String VERSIONS_PROPERTY = "datum.cdc.postgres.versions";

  private static final Namespace NAMESPACE = Namespace.create(EmbeddedPostgresExtension.class);
  private static final String KEY = "server";
  private static final String VERSION_KEY = "majorVersion";
  private static final String CURRENT_INVOCATION_KEY = "currentInvocation";

  /**
   * The settings the extension's servers run with on top of {@link EmbeddedPostgresServer}'s
   * defaults, before those of {@link EmbeddedPostgresTest#settings()}: {@code fsync=off}. A test
   * server is killed (its processes crash), never its machine: what a committed transaction has
   * written is in the kernel's page cache and survives any crash of PostgreSQL or of the JVM
   * ({@code synchronous_commit} stays {@code on}), so the flushes to disk only cost time (3 ms each
   * on the CI machine). A class that needs them says {@code settings = "fsync=on"}.
   */
  static final Map<String, String> TEST_SETTINGS = Map.of("fsync", "off");

  private final EmbeddedPostgresServer.Builder builder;

  /**
   * Creates the extension that {@link EmbeddedPostgresTest} and
   * {@code @ExtendWith(EmbeddedPostgresExtension.class)} register; it configures the server from
   * the {@link EmbeddedPostgresTest} annotation of the test class (or of an enclosing class), or
   * with the defaults if there is none.
   */
  public EmbeddedPostgresExtension() {
    this.builder = null;
  }

  /**
   * Creates an extension, for {@code @RegisterExtension}, that configures the server with the given
   * builder; the annotation's settings are then ignored.
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
  public boolean supportsParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
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
  public EmbeddedPostgresServer resolveParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    try {
      return server(extensionContext);
    } catch (RuntimeException e) {
      throw new ParameterResolutionException(
          "cannot start the embedded PostgreSQL: " + e.getMessage(), e);
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
    ExtensionContext classContext = invocationContext(classContext(context));
    EmbeddedPostgresServer server =
        classContext
            .getStore(NAMESPACE)
            .getOrComputeIfAbsent(
                KEY, key -> newServer(classContext), EmbeddedPostgresServer.class);
    // a test may have stopped it; it is the class's server, so bring it back
    return server.start();
  }

  /**
   * Supports classes annotated with {@link EmbeddedPostgresVersions}, when this extension was
   * registered by that annotation (not with {@code @RegisterExtension}).
   *
   * @param context the class template's context; not {@code null}
   * @return {@code true} if this extension provides the class's invocations
   */
  @Override
  public boolean supportsClassTemplate(ExtensionContext context) {
    return builder == null
        && context
            .getTestClass()
            .flatMap(EmbeddedPostgresExtension::findVersionsAnnotation)
            .isPresent();
  }

  /**
   * Provides one invocation per version of the class's {@link EmbeddedPostgresVersions}, in its
   * order, displayed as {@code PostgreSQL N}; each invocation's server is of that version.
   *
   * @param context the class template's context; not {@code null}
   * @return the invocations; never empty
   * @throws ExtensionConfigurationException if a version is listed twice or is not a PostgreSQL
   *     major version with pgoutput (10..99)
   */
  @Override
  public Stream<ClassTemplateInvocationContext> provideClassTemplateInvocationContexts(
      ExtensionContext context) {
    Class<?> testClass = context.getRequiredTestClass();
    EmbeddedPostgresVersions annotation =
        findVersionsAnnotation(testClass)
            .orElseThrow(
                () ->
                    new ExtensionConfigurationException(
                        "no @EmbeddedPostgresVersions on " + testClass.getName()));
    List<Integer> chosen = chosenVersions();
    return versions(annotation, testClass).stream()
        .filter(version -> chosen.isEmpty() || chosen.contains(version))
        .map(VersionInvocation::new);
  }

  /**
   * Allows a class no invocation when {@value #VERSIONS_PROPERTY} lists none of its versions.
   *
   * @param context the class template's context; not {@code null}
   * @return {@code true} if {@value #VERSIONS_PROPERTY} is set
   */
  @Override
  public boolean mayReturnZeroClassTemplateInvocationContexts(ExtensionContext context) {
    return !chosenVersions().isEmpty();
  }

  /**
   * The versions {@value #VERSIONS_PROPERTY} lists.
   *
   * @return the versions in the property's order; empty if it is unset or blank
   * @throws ExtensionConfigurationException if an entry is not a major version of 10..99
   */
  static List<Integer> chosenVersions() {
    String property = System.getProperty(VERSIONS_PROPERTY, "").trim();
    if (property.isEmpty()) {
      return List.of();
    }
    Set<Integer> versions = new LinkedHashSet<>();
    for (String entry : property.split(",")) {
      try {
        int version = Integer.parseInt(entry.trim());
        if (version < 10 || version > 99) {
          throw new NumberFormatException("out of 10..99");
        }
        versions.add(version);
      } catch (NumberFormatException e) {
        throw new ExtensionConfigurationException(
            "-D"
                + VERSIONS_PROPERTY
                + "="
                + property
                + ": \""
                + entry.trim()
                + "\" is not a PostgreSQL major version with pgoutput (10..99)",
            e);
      }
    }
    return List.copyOf(versions);
  }

  /**
   * The versions an annotation lists, checked: every supported one if it lists none.
   *
   * @param annotation the annotation; not {@code null}
   * @param testClass the class it is on, for messages; not {@code null}
   * @return the versions in the annotation's order; never empty
   * @throws ExtensionConfigurationException if a version is listed twice or out of 10..99
   */
  static List<Integer> versions(EmbeddedPostgresVersions annotation, Class<?> testClass) {
    if (annotation.value().length == 0) {
      return EmbeddedPostgresServer.SUPPORTED_MAJOR_VERSIONS;
    }
    Set<Integer> versions = new LinkedHashSet<>();
    for (int version : annotation.value()) {
      if (version < 10 || version > 99) {
        throw new ExtensionConfigurationException(
            "@EmbeddedPostgresVersions on "
                + testClass.getName()
                + " lists "
                + version
                + ", not a PostgreSQL major version with pgoutput (10..99)");
      }
      if (!versions.add(version)) {
        throw new ExtensionConfigurationException(
            "@EmbeddedPostgresVersions on " + testClass.getName() + " lists " + version + " twice");
      }
    }
    return List.copyOf(versions);
  }

  /**
   * Notes which version invocation of an {@link EmbeddedPostgresVersions} class runs, for the
   * parameters JUnit resolves in the class template's context rather than the invocation's (those
   * of the test constructor).
   *
   * @param context the invocation's context; not {@code null}
   * @throws ExtensionConfigurationException if another invocation of the class is running (the
   *     invocations of one class cannot run in parallel)
   */
  @Override
  public void beforeClassTemplateInvocation(ExtensionContext context) {
    if (!hasInvocationVersion(context)) {
      return;
    }
    ExtensionContext template = context.getParent().orElseThrow();
    ExtensionContext.Store store = template.getStore(NAMESPACE);
    Object previous = store.get(CURRENT_INVOCATION_KEY);
    store.put(CURRENT_INVOCATION_KEY, context);
    if (previous != null && previous != context) {
      throw new ExtensionConfigurationException(
          "the PostgreSQL versions of "
              + context.getRequiredTestClass().getName()
              + " run in parallel; @EmbeddedPostgresVersions runs them one after the other only");
    }
  }

  /**
   * Forgets the invocation {@link #beforeClassTemplateInvocation(ExtensionContext)} noted.
   *
   * @param context the invocation's context; not {@code null}
   */
  @Override
  public void afterClassTemplateInvocation(ExtensionContext context) {
    if (hasInvocationVersion(context)) {
      context.getParent().orElseThrow().getStore(NAMESPACE).remove(CURRENT_INVOCATION_KEY);
    }
  }

  private static boolean hasInvocationVersion(ExtensionContext context) {
    return context.getParent().isPresent()
        && context.getStore(NAMESPACE).get(VERSION_KEY, Integer.class) != null;
  }

  /**
   * The context of the version invocation running, if the given class context is a version class
   * template's own (JUnit resolves constructor parameters there); else the given context.
   */
  private static ExtensionContext invocationContext(ExtensionContext classContext) {
    if (classContext.getStore(NAMESPACE).get(VERSION_KEY, Integer.class) != null) {
      return classContext;
    }
    ExtensionContext current =
        classContext.getStore(NAMESPACE).get(CURRENT_INVOCATION_KEY, ExtensionContext.class);
    return current != null ? current : classContext;
  }

  private EmbeddedPostgresServer newServer(ExtensionContext classContext) {
    Integer invocationVersion = classContext.getStore(NAMESPACE).get(VERSION_KEY, Integer.class);
    if (builder != null) {
      return builder.start();
    }
    Class<?> testClass = classContext.getRequiredTestClass();
    if (invocationVersion == null && findVersionsAnnotation(testClass).isPresent()) {
      throw new IllegalStateException(
          "@EmbeddedPostgresVersions on "
              + testClass.getName()
              + ": its @BeforeAll and @AfterAll methods run once for the whole class, outside the version"
              + " invocations, and cannot take an EmbeddedPostgresServer; set up each version's server in"
              + " the test constructor, @BeforeEach or the tests");
    }
    EmbeddedPostgresServer.Builder configuration = fromAnnotation(testClass);
    if (invocationVersion != null) {
      configuration.majorVersion(invocationVersion);
    } else {
      List<Integer> chosen = chosenVersions();
      if (!chosen.isEmpty() && !chosen.contains(configuration.build().majorVersion())) {
        configuration.majorVersion(chosen.get(0));
      }
    }
    return configuration.start();
  }

  private static EmbeddedPostgresServer.Builder fromAnnotation(Class<?> testClass) {
    EmbeddedPostgresServer.Builder configuration =
        EmbeddedPostgresServer.builder().settings(TEST_SETTINGS);
    findAnnotation(testClass)
        .ifPresent(
            annotation -> {
              configuration.majorVersion(annotation.version());
              configuration.walSenderTimeout(
                  Duration.ofMillis(annotation.walSenderTimeoutMillis()));
              configuration.shutdownTimeout(Duration.ofMillis(annotation.shutdownTimeoutMillis()));
              for (String setting : annotation.settings()) {
                int equals = setting.indexOf('=');
                if (equals <= 0) {
                  throw new IllegalArgumentException(
                      "@EmbeddedPostgresTest setting is not name=value: \""
                          + setting
                          + "\" on "
                          + testClass.getName());
                }
                configuration.setting(
                    setting.substring(0, equals).trim(), setting.substring(equals + 1));
              }
            });
    return configuration;
  }

  private static Optional<EmbeddedPostgresTest> findAnnotation(Class<?> testClass) {
    return findEnclosing(testClass, EmbeddedPostgresTest.class);
  }

  private static Optional<EmbeddedPostgresVersions> findVersionsAnnotation(Class<?> testClass) {
    return findEnclosing(testClass, EmbeddedPostgresVersions.class);
  }

  private static <A extends Annotation> Optional<A> findEnclosing(
      Class<?> testClass, Class<A> type) {
    for (Class<?> c = testClass; c != null; c = c.getEnclosingClass()) {
      AnnotatedElement element = c;
      Optional<A> found = AnnotationSupport.findAnnotation(element, type);
      if (found.isPresent()) {
        return found;
      }
    }
    return Optional.empty();
  }

  /** One invocation of an {@link EmbeddedPostgresVersions} class: its version, in the store. */
  private static final class VersionInvocation implements ClassTemplateInvocationContext {
    private final int version;

    VersionInvocation(int version) {
      this.version = version;
    }

    @Override
    public String getDisplayName(int invocationIndex) {
      return "PostgreSQL " + version;
    }

    @Override
    public void prepareInvocation(ExtensionContext context) {
      context.getStore(NAMESPACE).put(VERSION_KEY, version);
    }
  }

  /** The nearest enclosing context that is a class's, not a method's or an invocation's. */
  private static ExtensionContext classContext(ExtensionContext context) {
    ExtensionContext current = context;
    while (current.getTestMethod().isPresent()) {
      current =
          current.getParent().orElseThrow(() -> new IllegalStateException("no class context"));
    }
    if (current.getTestClass().isEmpty()) {
      throw new IllegalStateException(
          "EmbeddedPostgresServer is only available within a test class");
    }
    return current;
  }
}
