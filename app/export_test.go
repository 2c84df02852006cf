package app

// UniversalOptions is universalOptions, for the tests of package app_test.
var UniversalOptions = universalOptions
