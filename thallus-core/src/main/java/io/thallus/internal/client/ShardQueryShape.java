package io.thallus.internal.client;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The queries a sharded read runs on each server over only the files it is chosen to read: those whose answer over
 * all the files is the union of their answers over each file, that is one {@code SELECT} of row-wise expressions
 * {@code FROM dataset} with an optional {@code WHERE}. Anything that looks across rows (aggregates, DISTINCT, GROUP
 * BY, ORDER BY, LIMIT, windows, joins, set operations, subqueries) would need merging the client does not do, and
 * is refused (INVALID_ARGUMENT) before any server is asked.
 *
 * <p>The check is the client's own and conservative, not DuckDB's parser (a client does not carry DuckDB): it reads
 * the SQL as tokens (strings, quoted names and comments skipped as SQL writes them), refuses a keyword of the list
 * below anywhere, and refuses a call of any of DuckDB's built-in aggregate functions by name. An aggregate the
 * server defines itself (a macro, an extension's) is not known here.
 */
public final class ShardQueryShape {
  /** Words that make a query look across rows or at more than one source; refused anywhere outside strings. */
  private static final Set<String> REFUSED_WORDS = Set.of("group", "order", "limit", "offset", "distinct", "having",
      "window", "over", "qualify", "join", "union", "intersect", "except", "using", "with", "sample", "tablesample",
      "fetch", "pivot", "unpivot", "recursive", "lateral", "into", "filter", "within", "natural", "cross",
      "positional", "asof", "anti", "semi", "values", "returning");
  /** DuckDB's built-in aggregate functions (duckdb_functions() of type aggregate); a test keeps the list whole. */
  private static final Set<String> AGGREGATES = Set.of("any_value", "approx_count_distinct", "approx_quantile",
      "approx_top_k", "arbitrary", "arg_max", "arg_max_null", "arg_max_nulls_last", "arg_min", "arg_min_null",
      "arg_min_nulls_last", "argmax", "argmin", "array_agg", "avg", "bit_and", "bit_or", "bit_xor", "bitstring_agg",
      "bool_and", "bool_or", "combine_aggr", "corr", "count", "count_if", "count_star", "countif", "covar_pop",
      "covar_samp", "decimal_average", "entropy", "favg", "first", "fsum", "group_concat", "histogram",
      "histogram_exact", "kahan_sum", "kurtosis", "kurtosis_pop", "last", "list", "listagg", "lttb", "mad", "max",
      "max_by", "mean", "median", "min", "min_by", "mode", "product", "quantile", "quantile_cont", "quantile_disc",
      "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy",
      "regr_syy", "reservoir_quantile", "sem", "skewness", "stddev", "stddev_pop", "stddev_samp", "string_agg", "sum",
      "sum_no_overflow", "sumkahan", "var_pop", "var_samp", "variance", "variant_group_object");
  /** The longest SQL checked; a sharded query is one SELECT over one view. */
  public static final int MAX_SQL_CHARS = 1 << 16;

  private ShardQueryShape() {}

  /** Returns if {@code sql} is one row-wise SELECT over {@code dataset}; throws INVALID_ARGUMENT saying why not. */
  public static void check(String sql) {
    if (sql.length() > MAX_SQL_CHARS) {
      throw refuse("it is longer than " + MAX_SQL_CHARS + " characters");
    }
    List<Token> tokens = tokens(sql);
    if (!tokens.isEmpty() && tokens.getLast().is(";")) {
      tokens.removeLast();
    }
    if (tokens.isEmpty() || !tokens.getFirst().isWord("select")) {
      throw refuse("it is not a SELECT");
    }
    int depth = 0;
    int from = -1;
    for (int i = 0; i < tokens.size(); i++) {
      Token token = tokens.get(i);
      if (token.is(";")) {
        throw refuse("it holds more than one statement");
      }
      if (token.is("$")) {
        throw refuse("it uses $ (dollar quoting or numbered parameters): use ? parameters");
      }
      depth += token.is("(") ? 1 : token.is(")") ? -1 : 0;
      if (token.quoted() && AGGREGATES.contains(token.text()) && i + 1 < tokens.size()
          && tokens.get(i + 1).is("(")) {
        throw refuse("it calls the aggregate " + token.text() + "()");
      }
      if (!token.word()) {
        continue;
      }
      String word = token.text();
      if (word.equals("select") && i > 0) {
        throw refuse("it has a subquery or more than one SELECT");
      }
      if (REFUSED_WORDS.contains(word)) {
        throw refuse("it uses " + word.toUpperCase(Locale.ROOT) + ", which looks across rows or sources");
      }
      if (AGGREGATES.contains(word) && i + 1 < tokens.size() && tokens.get(i + 1).is("(")) {
        throw refuse("it calls the aggregate " + word + "()");
      }
      if (word.equals("from") && depth == 0) {
        if (from >= 0) {
          throw refuse("it has more than one FROM");
        }
        from = i;
      }
    }
    if (from < 0 || from + 1 >= tokens.size() || !tokens.get(from + 1).text().equals("dataset")
        || !(tokens.get(from + 1).word() || tokens.get(from + 1).quoted())) {
      throw refuse("it does not read FROM dataset");
    }
    int next = from + 2;
    if (next < tokens.size() && tokens.get(next).isWord("as")) {
      next++;
    }
    if (next < tokens.size() && (tokens.get(next).word() || tokens.get(next).quoted())
        && !tokens.get(next).isWord("where")) {
      next++; // an alias
    }
    if (next < tokens.size() && !tokens.get(next).isWord("where")) {
      throw refuse("after FROM dataset comes " + tokens.get(next).text() + ", where only an alias and WHERE may");
    }
  }

  private static ThallusException refuse(String why) {
    return ThallusException.of(StatusCode.INVALID_ARGUMENT, "a sharded read runs one SELECT of row-wise expressions "
        + "FROM dataset [WHERE ...] on each server (no aggregates, DISTINCT, GROUP BY, ORDER BY, LIMIT, windows, "
        + "joins, set operations or subqueries, whose results would need merging); this query is refused because "
        + why);
  }

  /** A word (lowercased), a quoted name (its text), a string literal, a number, or one punctuation character. */
  private record Token(String text, Kind kind) {
    enum Kind { WORD, QUOTED, STRING, OTHER }

    boolean word() {
      return kind == Kind.WORD;
    }

    boolean quoted() {
      return kind == Kind.QUOTED;
    }

    boolean isWord(String value) {
      return kind == Kind.WORD && text.equals(value);
    }

    boolean is(String punctuation) {
      return kind == Kind.OTHER && text.equals(punctuation);
    }
  }

  private static List<Token> tokens(String sql) {
    List<Token> tokens = new ArrayList<>();
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        while (i < n && sql.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int end = sql.indexOf("*/", i + 2);
        if (end < 0) {
          throw refuse("a comment is not closed");
        }
        i = end + 2;
      } else if (c == '\'' || c == '"') {
        int start = i + 1;
        StringBuilder text = new StringBuilder();
        i = start;
        while (true) {
          if (i >= n) {
            throw refuse("a quoted " + (c == '"' ? "name" : "string") + " is not closed");
          }
          if (sql.charAt(i) == c) {
            if (i + 1 < n && sql.charAt(i + 1) == c) {
              text.append(c);
              i += 2;
              continue;
            }
            i++;
            break;
          }
          text.append(sql.charAt(i++));
        }
        tokens.add(new Token(c == '"' ? text.toString().toLowerCase(Locale.ROOT) : text.toString(),
            c == '"' ? Token.Kind.QUOTED : Token.Kind.STRING));
      } else if (Character.isLetter(c) || c == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_')) {
          i++;
        }
        tokens.add(new Token(sql.substring(start, i).toLowerCase(Locale.ROOT), Token.Kind.WORD));
      } else if (Character.isDigit(c)) {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '.')) {
          i++;
        }
        tokens.add(new Token(sql.substring(start, i), Token.Kind.OTHER));
      } else {
        tokens.add(new Token(String.valueOf(c), Token.Kind.OTHER));
        i++;
      }
    }
    return tokens;
  }
}
