// `trawl explain` against the walk (issue 14): on generated trees and
// queries (every dialect, hidden, types, depth limits, excludes, with and
// without pattern sets), explain says "selected" for exactly the paths the
// walk returns. Explain asks the walk's own query tables (query.h); this
// pins that they answer as one.
#include "walk_gen.hpp"
#include "walk_util.hpp"

using namespace walktest;
using namespace walkgen;

namespace {

class ExplainProperty : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ExplainProperty, SelectedExactlyWhenTheWalkReturnsIt)
{
  const uint32_t seed = GetParam();
  TempDir tmp;
  Rng rng(seed);
  generate_dir(rng, tmp.path(), "", 0);
  const auto entries = scan(tmp.path());
  const TreeFacts facts = facts_of(entries);
  for (int round = 0; round < 8 && !HasFailure(); round++) {
    Query q;
    gen_query(rng, facts, q);
    q.opt.ignore = 0;
    q.opt.threads = 1;
    // Half the rounds through pattern sets and the prune index.
    q.patset_min = round % 2 ? 1 : 0;
    q.compile_all();
    const Outcome walked = walk_collect(q, {tmp.path()});
    ASSERT_TRUE(walked.ok);
    const std::set<std::string> results(walked.paths.begin(), walked.paths.end());
    Walker w = make_walker(q, {tmp.path()}, nullptr);
    for (const auto &e : entries) {
      TrawlExplanation why;
      GError *error = nullptr;
      ASSERT_TRUE(trawl_walker_explain(w.get(), e.path.c_str(), &why, &error))
          << (error ? error->message : "");
      EXPECT_EQ(why.selected, results.count(e.path) == 1)
          << "seed " << seed << " round " << round << " " << q.describe() << "\npath "
          << show(e.path) << " reason " << why.reason;
      trawl_explanation_clear(&why);
    }
  }
}

// Seeds 1 to 12, or 1 to N with TRAWL_EXPLAIN_PROPERTY_SEEDS=N.
INSTANTIATE_TEST_SUITE_P(Seeds, ExplainProperty,
                         ::testing::ValuesIn(seeds_from_env("TRAWL_EXPLAIN_PROPERTY_SEEDS", 12)));

} // namespace
