-- Reserved; filled in by the change that needs it.
SELECT 1;
