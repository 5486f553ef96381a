// Loaded first in every process of the test run (NODE_OPTIONS, set by scripts/test.ts), before tap's
// process-info recorder: it records every module a test process loads (reading each file again and
// looking for source maps) for coverage, which this suite turns off, at about 0.8 s of CPU per test
// file. tap's runner gives its exclusion pattern to each test process in this variable; excluding
// everything here, before the recorder reads it, leaves it nothing to do.
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = '/./';
