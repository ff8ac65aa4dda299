import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122022858 } from './Migration20261122022858';
import { Migration20261123015901 } from './Migration20261123015901';
import { Migration20261123024645 } from './Migration20261123024645';
import { Migration20261123072456 } from './Migration20261123072456';
import { Migration20261124125959 } from './Migration20261124125959';
import { Migration20261124130530 } from './Migration20261124130530';
import { Migration20261124130936 } from './Migration20261124130936';
import { Migration20261124160000 } from './Migration20261124160000';
import { Migration20261124161000 } from './Migration20261124161000';
import { Migration20261124170000 } from './Migration20261124170000';
import { Migration20261124191426 } from './Migration20261124191426';
import { Migration20261124221036 } from './Migration20261124221036';
import { Migration20261125190000 } from './Migration20261125190000';
import { Migration20261125200000 } from './Migration20261125200000';
import { Migration20261125210000 } from './Migration20261125210000';
import { Migration20261125220000 } from './Migration20261125220000';
import { Migration20261125230000 } from './Migration20261125230000';
import { Migration20261126000000 } from './Migration20261126000000';
import { Migration20261126100000 } from './Migration20261126100000';
import { Migration20261126104400 } from './Migration20261126104400';
import { Migration20261127010000 } from './Migration20261127010000';
import { Migration20261127020000 } from './Migration20261127020000';
import { Migration20261128010000 } from './Migration20261128010000';
import { Migration20261129010000 } from './Migration20261129010000';
import { Migration20261129020000 } from './Migration20261129020000';
import { Migration20261130010000 } from './Migration20261130010000';
import { Migration20261130020000 } from './Migration20261130020000';
import { Migration20261201010000 } from './Migration20261201010000';
import { Migration20261202010000 } from './Migration20261202010000';
import { Migration20261202020000 } from './Migration20261202020000';
import { Migration20261203010000 } from './Migration20261203010000';
import { Migration20261204010000 } from './Migration20261204010000';
import { Migration20261205010000 } from './Migration20261205010000';
import { Migration20261206010000 } from './Migration20261206010000';
import { Migration20261207010000 } from './Migration20261207010000';
import { Migration20261207020000 } from './Migration20261207020000';

/**
 * Every migration, in order. The MikroORM CLI writes new ones next to this file
 * (`npm run db:migration:create`); add each here. A test fails when a file is missing from this
 * list or when the entities and the migrations disagree.
 */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122022858', class: Migration20261122022858 },
  { name: 'Migration20261123015901', class: Migration20261123015901 },
  { name: 'Migration20261123024645', class: Migration20261123024645 },
  { name: 'Migration20261123072456', class: Migration20261123072456 },
  { name: 'Migration20261124125959', class: Migration20261124125959 },
  { name: 'Migration20261124130530', class: Migration20261124130530 },
  { name: 'Migration20261124130936', class: Migration20261124130936 },
  { name: 'Migration20261124160000', class: Migration20261124160000 },
  { name: 'Migration20261124161000', class: Migration20261124161000 },
  { name: 'Migration20261124170000', class: Migration20261124170000 },
  { name: 'Migration20261124191426', class: Migration20261124191426 },
  { name: 'Migration20261124221036', class: Migration20261124221036 },
  { name: 'Migration20261125190000', class: Migration20261125190000 },
  { name: 'Migration20261125200000', class: Migration20261125200000 },
  { name: 'Migration20261125210000', class: Migration20261125210000 },
  { name: 'Migration20261125220000', class: Migration20261125220000 },
  { name: 'Migration20261125230000', class: Migration20261125230000 },
  { name: 'Migration20261126000000', class: Migration20261126000000 },
  { name: 'Migration20261126100000', class: Migration20261126100000 },
  { name: 'Migration20261126104400', class: Migration20261126104400 },
  { name: 'Migration20261127010000', class: Migration20261127010000 },
  { name: 'Migration20261127020000', class: Migration20261127020000 },
  { name: 'Migration20261128010000', class: Migration20261128010000 },
  { name: 'Migration20261129010000', class: Migration20261129010000 },
  { name: 'Migration20261129020000', class: Migration20261129020000 },
  { name: 'Migration20261130010000', class: Migration20261130010000 },
  { name: 'Migration20261130020000', class: Migration20261130020000 },
  { name: 'Migration20261201010000', class: Migration20261201010000 },
  { name: 'Migration20261202010000', class: Migration20261202010000 },
  { name: 'Migration20261202020000', class: Migration20261202020000 },
  { name: 'Migration20261203010000', class: Migration20261203010000 },
  { name: 'Migration20261204010000', class: Migration20261204010000 },
  { name: 'Migration20261205010000', class: Migration20261205010000 },
  { name: 'Migration20261206010000', class: Migration20261206010000 },
  { name: 'Migration20261207010000', class: Migration20261207010000 },
  { name: 'Migration20261207020000', class: Migration20261207020000 },
];
