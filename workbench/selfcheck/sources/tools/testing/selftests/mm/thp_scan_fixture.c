/* Fixture for workbench/check-expected.py (see ../../../../../README). */
FIXTURE(fixture) {
	int x;
};

FIXTURE_VARIANT(fixture) {
	int y;
};

FIXTURE_VARIANT_ADD(fixture, variant_a) { .y = 1 };
FIXTURE_VARIANT_ADD(fixture, variant_b) { .y = 2 };

TEST_F(fixture, kept)
{
}

TEST_F_TIMEOUT(fixture, added, 60)
{
}

TEST(plain)
{
}

TEST_HARNESS_MAIN
