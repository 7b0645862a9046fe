/* Fixture for workbench/check-expected.py (see ../../../README). */
static struct kunit_case fixture_test_cases[] = {
	KUNIT_CASE(fixture_case_a),
	/* KUNIT_CASE(fixture_case_commented_out), */
	KUNIT_CASE(fixture_case_new),
	{},
};

static struct kunit_suite fixture_test_suite = {
	.name = "fixture",
	.test_cases = fixture_test_cases,
};
