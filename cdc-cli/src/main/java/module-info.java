/**
 * The {@code pgcdc} command ({@code io.datum.cdc.cli.Pgcdc}): {@code stream}, {@code demo}, {@code
 * status}, {@code checkpoint show}, {@code checkpoint delete} and {@code slot drop}, JSON lines on
 * stdout. An application, not a library: it exports nothing. The checkpoint stores it opens by URI
 * are found by service binding.
 */
module io.datum.cdc.cli {
  requires io.datum.cdc.core;
  requires io.datum.cdc.embedded;
  requires io.datum.cdc.store.file;
  requires io.datum.cdc.store.rocksdb;
  requires io.datum.cdc.store.mapdb;
  requires io.datum.cdc.store.jdbc;
  requires info.picocli;
  requires com.fasterxml.jackson.databind;
  requires java.sql;
  requires org.slf4j;
  requires io.datum.cdc.micrometer;
  requires micrometer.core;
  requires micrometer.registry.prometheus;
  requires jdk.httpserver;

  // picocli reads and writes the annotated option fields of the commands reflectively
  opens io.datum.cdc.cli to
      info.picocli;
  opens io.datum.cdc.cli.stream to
      info.picocli;
  opens io.datum.cdc.cli.common to
      info.picocli;
}
