package io.thallus.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.ibatis.annotations.Insert;
import org.apache.ibatis.datasource.unpooled.UnpooledDataSource;
import org.apache.ibatis.executor.BatchResult;
import org.apache.ibatis.mapping.Environment;
import org.apache.ibatis.session.Configuration;
import org.apache.ibatis.session.ExecutorType;
import org.apache.ibatis.session.SqlSession;
import org.apache.ibatis.session.SqlSessionFactory;
import org.apache.ibatis.session.SqlSessionFactoryBuilder;
import org.apache.ibatis.transaction.jdbc.JdbcTransactionFactory;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * Batches as applications send them, run in a JVM with no flags against {@code args[0]} (a jdbc:thallus URL): plain
 * JDBC ({@link BatchWorkload}), Spring's JdbcTemplate.batchUpdate, a jOOQ batch and MyBatis's BATCH executor. Prints
 * each batch's counts and every table's rows, for {@link PlainJvmIT} to compare with DuckDB's; a failure prints its
 * stack trace and exits 1.
 */
public final class FlaglessBatchMain {
  private FlaglessBatchMain() {}

  /** MyBatis's mapper: one INSERT of a row given as a map. */
  public interface ItemMapper {
    @Insert("INSERT INTO mybatis_items VALUES (#{id}, #{name}, #{price}, #{day}, #{stamp}, #{flag}, #{ratio})")
    void insert(Map<String, Object> item);
  }

  public static void main(String[] args) throws Exception {
    System.setProperty("org.jooq.no-logo", "true");
    System.setProperty("org.jooq.no-tips", "true");
    String url = args[0];
    List<String> lines = new ArrayList<>();
    try (Connection connection = DriverManager.getConnection(url)) {
      lines.addAll(BatchWorkload.plainJdbc(connection, "plain_items"));
      lines.addAll(BatchWorkload.dump(connection, "plain_items"));

      BatchWorkload.create(connection, "spring_items");
      JdbcTemplate spring = new JdbcTemplate(new SingleConnectionDataSource(connection, true));
      lines.add(BatchWorkload.counts("spring_items",
          spring.batchUpdate(BatchWorkload.INSERT.formatted("spring_items"), BatchWorkload.rows())));
      lines.addAll(BatchWorkload.dump(connection, "spring_items"));

      BatchWorkload.create(connection, "jooq_items");
      DSLContext jooq = DSL.using(connection, SQLDialect.DUCKDB);
      lines.add(BatchWorkload.counts("jooq_items", jooq.batch(BatchWorkload.INSERT.formatted("jooq_items"),
          BatchWorkload.rows().toArray(Object[][]::new)).execute()));
      lines.addAll(BatchWorkload.dump(connection, "jooq_items"));

      BatchWorkload.create(connection, "mybatis_items");
      lines.add(BatchWorkload.counts("mybatis_items", myBatis(url)));
      lines.addAll(BatchWorkload.dump(connection, "mybatis_items"));
    }
    lines.forEach(System.out::println);
  }

  /** MyBatis's BATCH executor on a pool-less data source, one transaction, committed: the counts per row. */
  private static int[] myBatis(String url) {
    Configuration configuration = new Configuration(new Environment("flagless", new JdbcTransactionFactory(),
        new UnpooledDataSource(ThallusDriver.class.getName(), url, null, null)));
    configuration.addMapper(ItemMapper.class);
    SqlSessionFactory factory = new SqlSessionFactoryBuilder().build(configuration);
    try (SqlSession session = factory.openSession(ExecutorType.BATCH)) {
      ItemMapper mapper = session.getMapper(ItemMapper.class);
      for (Object[] row : BatchWorkload.rows()) {
        Map<String, Object> item = new LinkedHashMap<>();
        String[] names = {"id", "name", "price", "day", "stamp", "flag", "ratio"};
        for (int i = 0; i < names.length; i++) {
          item.put(names[i], row[i]);
        }
        mapper.insert(item);
      }
      List<BatchResult> results = session.flushStatements();
      session.commit();
      List<Integer> counts = new ArrayList<>();
      for (BatchResult result : results) {
        for (int count : result.getUpdateCounts()) {
          counts.add(count);
        }
      }
      return counts.stream().mapToInt(Integer::intValue).toArray();
    }
  }
}
