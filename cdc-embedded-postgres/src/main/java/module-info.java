/**
 * A real PostgreSQL server for tests and demos, started from the zonky binaries archives on the
 * class path or module path ({@link io.datum.cdc.embedded.EmbeddedPostgresServer}): major versions
 * 14 to 18, {@code wal_level=logical}, crash and restart on the same data directory. No JUnit.
 */
module io.datum.cdc.embedded {
  requires transitive java.sql;
  requires org.postgresql.jdbc;
  requires org.apache.commons.compress;
  requires org.tukaani.xz;
  // com.sun.security.auth.module.UnixSystem: whether the JVM runs as root (initdb refuses root)
  requires jdk.security.auth;

  exports io.datum.cdc.embedded;
}
