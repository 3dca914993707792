package io.datum.cdc.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The {@code datum.cdc.*} properties against the declarations of the source options: the IDE
 * metadata of each option (description, default) is generated from its declaration into
 * additional-spring-configuration-metadata.json, and the metadata the build produces has a bound
 * property of the right type for every option. Fails when a property is missing, renamed or
 * re-defaulted.
 */
class CdcPropertiesDriftTest {

  static final Path ADDITIONAL =
      Path.of("src/main/resources/META-INF/additional-spring-configuration-metadata.json");
  static final String REGENERATE =
      "./mvnw -q test -pl cdc-spring-boot-starter -am -Dtest=CdcPropertiesDriftTest"
          + " -Dsurefire.failIfNoSpecifiedTests=false -Ddatum.cdc.regenerate=true";

  /** Options deliberately without a property, and why: none, Spring offers every option. */
  static final Map<SourceOption<?>, String> NOT_OFFERED = Map.of();

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  static String property(SourceOption<?> o) {
    return "datum.cdc." + PgCdcSourceFactory.property(o);
  }

  /** The metadata default of an option, as Spring Boot binds it back; null for none. */
  static JsonNode defaultValue(SourceOption<?> o) {
    Object d = o.defaultValue();
    JsonNodeFactory f = JsonNodeFactory.instance;
    if (d == null || o.kind() == SourceOption.Kind.PATH) {
      return null; // a path's default is the machine's java.io.tmpdir
    }
    return switch (o.kind()) {
      case BOOLEAN -> f.booleanNode((Boolean) d);
      case INT -> f.numberNode((Integer) d);
      case LONG, SIZE -> f.numberNode((Long) d);
      case DURATION -> f.textNode(o.format((Duration) d));
      case ENUM_SET, LIST -> {
        ArrayNode a = f.arrayNode();
        for (String s : o.format(d).split(",")) {
          if (!s.isEmpty()) {
            a.add(s);
          }
        }
        yield a;
      }
      default -> f.textNode(o.format(d));
    };
  }

  @Test
  void theAdditionalMetadataIsGeneratedFromTheDeclarations() throws IOException {
    String actual = Files.readString(ADDITIONAL, StandardCharsets.UTF_8);
    ObjectNode root = (ObjectNode) JSON.readTree(actual);
    ArrayNode properties = JSON.createArrayNode();
    List<String> generated = new ArrayList<>();
    for (SourceOption<?> o : SourceOptions.all()) {
      if (NOT_OFFERED.containsKey(o)) {
        continue;
      }
      ObjectNode p = properties.addObject();
      p.put("name", property(o));
      p.put("description", o.description());
      if (!new org.springframework.beans.BeanWrapperImpl(new CdcProperties())
          .isReadableProperty(beanPath(o))) {
        p.put("type", javaType(o)); // no field: bound by name (PgCdcSourceFactory)
      }
      JsonNode def = defaultValue(o);
      if (def != null) {
        p.set("defaultValue", def);
      }
      generated.add(property(o));
    }
    for (JsonNode p : root.get("properties")) {
      if (!generated.contains(p.get("name").asText())) {
        properties.add(p); // not a source option: kept as written (checkpoint-store, ...)
      }
    }
    root.set("properties", properties);
    String expected = JSON.writeValueAsString(root) + "\n";
    if (Boolean.getBoolean("datum.cdc.regenerate")) {
      Files.writeString(ADDITIONAL, expected, StandardCharsets.UTF_8);
      actual = expected;
    }
    assertEquals(
        expected,
        actual,
        ADDITIONAL
            + " differs from the declarations of the source options; regenerate it: "
            + REGENERATE);
  }

  @Test
  void everyOptionIsABoundPropertyWithItsDeclaredDescriptionAndDefault() throws IOException {
    // the metadata just regenerated is merged by the next compile, not this one
    Assumptions.assumeFalse(Boolean.getBoolean("datum.cdc.regenerate"));
    JsonNode root;
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      root = JSON.readTree(in);
    }
    Map<String, JsonNode> byName = new HashMap<>();
    root.get("properties").forEach(p -> byName.put(p.get("name").asText(), p));
    List<String> problems = new ArrayList<>();
    for (SourceOption<?> o : SourceOptions.all()) {
      if (NOT_OFFERED.containsKey(o)) {
        continue;
      }
      JsonNode p = byName.get(property(o));
      if (p == null || p.get("type") == null) {
        problems.add(property(o) + ": no property for option " + o);
        continue;
      }
      String type = p.get("type").asText();
      if (!type.equals(javaType(o)) && !type.startsWith(javaType(o) + "<")) {
        problems.add(property(o) + ": type " + type + ", the option's is " + javaType(o));
      }
      if (!o.description().equals(p.path("description").asText())) {
        problems.add(property(o) + ": description differs from the option's");
      }
      if (!String.valueOf(defaultValue(o)).equals(String.valueOf(p.get("defaultValue")))) {
        problems.add(
            property(o)
                + ": default "
                + p.get("defaultValue")
                + ", the option's "
                + defaultValue(o));
      }
    }
    assertEquals(List.of(), problems, "regenerate the metadata: " + REGENERATE);
  }

  private static String beanPath(SourceOption<?> o) {
    return SourceOption.camelCase(PgCdcSourceFactory.property(o));
  }

  private static String javaType(SourceOption<?> o) {
    return switch (o.kind()) {
      case STRING, SECRET -> String.class.getName();
      case BOOLEAN -> Boolean.class.getName();
      case INT -> Integer.class.getName();
      case LONG, SIZE -> Long.class.getName();
      case DURATION -> Duration.class.getName();
      case PATH -> Path.class.getName();
      case ENUM -> o.enumType().getName();
      case ENUM_SET, LIST -> java.util.List.class.getName();
    };
  }
}
