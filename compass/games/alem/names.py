"""ALEM's vocabulary as plain Python: actions, blocks, mobs, roles, levels, achievements.

Copied from ``alem-env`` 0.2.1 (``alem.alem_coop.constants`` and the LLM wrapper's label lists) so
that skills, the skill API and the metrics never have to import JAX or ``alem``;
``tests/alem/test_names.py`` checks every table against the installed package.
"""

from __future__ import annotations

N_AGENTS = 3
N_ACTIONS = 56  # 54 game actions + one Give slot per other teammate (no discrete comm channels)
MAP_SIZE = 48
VIEW_ROWS, VIEW_COLS = 9, 11  # the egocentric window (rows x cols), agent at the centre
#: Every inventory key of ``ObsData.inventory`` (counted items, then tool tiers and gear).
INVENTORY_KEYS = (
    "wood",
    "stone",
    "coal",
    "iron",
    "diamond",
    "ruby",
    "sapphire",
    "sapling",
    "arrows",
    "torches",
    "books",
    "pickaxe",
    "sword",
    "bow",
    "armour",
    "potions",
)
SIGHT_RANGE = 5.0  # half the view width; Entity.rel_x/rel_y are divided by it
REQUEST_DURATION = 10
MONSTERS_TO_CLEAR_LEVEL = 8

# The LLM harness labels, index = action id (Give is expanded per teammate below).
ACTION_LABELS: tuple[str, ...] = (
    "Noop",
    "Move West",
    "Move East",
    "Move North",
    "Move South",
    "Do",
    "Sleep",
    "Place Stone",
    "Place Table",
    "Place Furnace",
    "Place Plant",
    "Make Wood Pickaxe",
    "Make Stone Pickaxe",
    "Make Iron Pickaxe",
    "Make Wood Sword",
    "Make Stone Sword",
    "Make Iron Sword",
    "Rest",
    "Descend",
    "Ascend",
    "Make Diamond Pickaxe",
    "Make Diamond Sword",
    "Make Iron Armour",
    "Make Diamond Armour",
    "Shoot Arrow",
    "Make Arrow",
    "Cast Spell",
    "Place Torch",
    "Drink Potion Red",
    "Drink Potion Green",
    "Drink Potion Blue",
    "Drink Potion Pink",
    "Drink Potion Cyan",
    "Drink Potion Yellow",
    "Read Book",
    "Enchant Sword",
    "Enchant Armour",
    "Make Torch",
    "Level Up Dexterity",
    "Level Up Strength",
    "Level Up Intelligence",
    "Enchant Bow",
    "Request Food",
    "Request Drink",
    "Request Wood",
    "Request Stone",
    "Request Iron",
    "Request Coal",
    "Request Diamond",
    "Request Ruby",
    "Request Sapphire",
    "Build Shelter",
    "Build Forge",
    "Build Beacon",
    "Give",
)
GIVE = 54
NOOP, LEFT, RIGHT, UP, DOWN, DO, SLEEP = 0, 1, 2, 3, 4, 5, 6
PLACE_STONE, PLACE_TABLE, PLACE_FURNACE, PLACE_PLANT = 7, 8, 9, 10
REST, DESCEND, ASCEND = 17, 18, 19
PLACE_TORCH = 27
REQUEST_FOOD = 42
BUILD_SHELTER, BUILD_FORGE, BUILD_BEACON = 51, 52, 53

# Movement: action -> (dx, dy) with x = column (east +), y = row (south +), as in the text.
MOVES: dict[int, tuple[int, int]] = {LEFT: (-1, 0), RIGHT: (1, 0), UP: (0, -1), DOWN: (0, 1)}
DIRECTION_ACTIONS = {"west": LEFT, "east": RIGHT, "north": UP, "south": DOWN}
FACING_NAMES = {0: "none", 1: "west", 2: "east", 3: "north", 4: "south"}  # state.player_direction

REQUESTABLE = ("food", "drink", "wood", "stone", "iron", "coal", "diamond", "ruby", "sapphire")
CRAFT_ACTIONS = {
    "wood_pickaxe": 11,
    "stone_pickaxe": 12,
    "iron_pickaxe": 13,
    "wood_sword": 14,
    "stone_sword": 15,
    "iron_sword": 16,
    "diamond_pickaxe": 20,
    "diamond_sword": 21,
    "iron_armour": 22,
    "diamond_armour": 23,
    "arrow": 25,
    "torch": 37,
}
PLACE_ACTIONS = {
    "stone": PLACE_STONE,
    "table": PLACE_TABLE,
    "furnace": PLACE_FURNACE,
    "plant": PLACE_PLANT,
    "sapling": PLACE_PLANT,
    "torch": PLACE_TORCH,
}
BUILD_ACTIONS = {"shelter": BUILD_SHELTER, "forge": BUILD_FORGE, "beacon": BUILD_BEACON}
BUILD_COSTS = {
    "shelter": {"wood": 10, "stone": 5},
    "forge": {"stone": 10, "iron": 3, "coal": 2},
    "beacon": {"iron": 3, "coal": 2},
}

# The blocks that are construction sites (a Build action works them, not Do).
CONSTRUCTION_BLOCK_NAMES = ("construction_site", "construction_in_progress")

BLOCK_NAMES: tuple[str, ...] = (
    "invalid",
    "out_of_bounds",
    "grass",
    "water",
    "stone",
    "tree",
    "wood",
    "path",
    "coal",
    "iron",
    "diamond",
    "crafting_table",
    "furnace",
    "sand",
    "lava",
    "plant",
    "ripe_plant",
    "wall",
    "darkness",
    "wall_moss",
    "stalagmite",
    "sapphire",
    "ruby",
    "chest",
    "fountain",
    "fire_grass",
    "ice_grass",
    "gravel",
    "fire_tree",
    "ice_shrub",
    "enchantment_table_fire",
    "enchantment_table_ice",
    "necromancer",
    "grave",
    "grave2",
    "grave3",
    "necromancer_vulnerable",
    "construction_site",
    "epic_shelter",
    "epic_forge",
    "epic_beacon",
    "construction_in_progress",
)
BLOCK_ID = {name: i for i, name in enumerate(BLOCK_NAMES)}
SOLID_BLOCKS = frozenset(
    {
        "stone",
        "tree",
        "coal",
        "iron",
        "diamond",
        "crafting_table",
        "furnace",
        "plant",
        "ripe_plant",
        "wall",
        "wall_moss",
        "stalagmite",
        "ruby",
        "sapphire",
        "chest",
        "fountain",
        "fire_tree",
        "ice_shrub",
        "enchantment_table_fire",
        "enchantment_table_ice",
        "grave",
        "grave2",
        "grave3",
        "necromancer",
        "necromancer_vulnerable",
        "construction_site",
        "epic_shelter",
        "epic_forge",
        "epic_beacon",
        "construction_in_progress",
    }
)
# Players walk on any non-solid block except water and lava.
WALKABLE_BLOCKS = frozenset(n for n in BLOCK_NAMES if n not in SOLID_BLOCKS) - {
    "water",
    "lava",
    "invalid",
    "out_of_bounds",
    "darkness",
}
WALKABLE_IDS = frozenset(BLOCK_ID[n] for n in WALKABLE_BLOCKS)
SKIP_BLOCKS = frozenset({"grass", "sand", "path"})  # the harness never lists these in "You see:"

ITEM_NAMES = {
    1: "placed torch",
    2: "ladder down",
    3: "ladder up",
    4: "ladder down (blocked — clear more monsters)",
}

MELEE_MOB_NAMES = (
    "zombie",
    "gnome_warrior",
    "orc_soldier",
    "lizard",
    "knight",
    "troll",
    "pigman",
    "frost_troll",
)
RANGED_MOB_NAMES = (
    "skeleton",
    "gnome_archer",
    "orc_mage",
    "kobold",
    "knight_archer",
    "deep_thing",
    "fire_elemental",
    "ice_elemental",
)
PASSIVE_MOB_NAMES = ("cow", "bat", "snail", "buffalo", "large_cow")

ROLES = {1: "forager", 2: "warrior", 3: "miner"}  # Specialization enum values
ROLE_ORDER = ("warrior", "forager", "miner")  # agent i has role ROLE_ORDER[i % 3]

LEVEL_NAMES = (
    "Overworld",
    "Gnomish Mines",
    "Dungeon",
    "Sewers",
    "Vault",
    "Troll Mines",
    "Fire Realm",
    "Ice Realm",
    "Graveyard",
)

ACHIEVEMENTS: tuple[str, ...] = (
    "COLLECT_WOOD",
    "PLACE_TABLE",
    "EAT_COW",
    "COLLECT_SAPLING",
    "COLLECT_DRINK",
    "COLLECT_FOOD",
    "MAKE_WOOD_PICKAXE",
    "MAKE_WOOD_SWORD",
    "PLACE_PLANT",
    "DEFEAT_ZOMBIE",
    "COLLECT_STONE",
    "PLACE_STONE",
    "EAT_PLANT",
    "DEFEAT_SKELETON",
    "MAKE_STONE_PICKAXE",
    "MAKE_STONE_SWORD",
    "WAKE_UP",
    "PLACE_FURNACE",
    "COLLECT_COAL",
    "COLLECT_IRON",
    "COLLECT_DIAMOND",
    "MAKE_IRON_PICKAXE",
    "MAKE_IRON_SWORD",
    "MAKE_ARROW",
    "MAKE_TORCH",
    "PLACE_TORCH",
    "COLLECT_SAPPHIRE",
    "COLLECT_RUBY",
    "MAKE_DIAMOND_PICKAXE",
    "MAKE_DIAMOND_SWORD",
    "MAKE_IRON_ARMOUR",
    "MAKE_DIAMOND_ARMOUR",
    "ENTER_GNOMISH_MINES",
    "ENTER_DUNGEON",
    "DEFEAT_GNOME_WARRIOR",
    "DEFEAT_GNOME_ARCHER",
    "DEFEAT_ORC_SOLIDER",
    "DEFEAT_ORC_MAGE",
    "EAT_BAT",
    "EAT_SNAIL",
    "FIND_BOW",
    "FIRE_BOW",
    "OPEN_CHEST",
    "DRINK_POTION",
    "ENTER_SEWERS",
    "ENTER_VAULT",
    "ENTER_TROLL_MINES",
    "DEFEAT_LIZARD",
    "DEFEAT_KOBOLD",
    "DEFEAT_KNIGHT",
    "DEFEAT_ARCHER",
    "DEFEAT_TROLL",
    "DEFEAT_DEEP_THING",
    "LEARN_SPELL",
    "CAST_SPELL",
    "ENCHANT_SWORD",
    "ENCHANT_ARMOUR",
    "ENTER_FIRE_REALM",
    "ENTER_ICE_REALM",
    "ENTER_GRAVEYARD",
    "DEFEAT_PIGMAN",
    "DEFEAT_FIRE_ELEMENTAL",
    "DEFEAT_FROST_TROLL",
    "DEFEAT_ICE_ELEMENTAL",
    "DAMAGE_NECROMANCER",
    "DEFEAT_NECROMANCER",
    "COORD_2_AGENTS_SOFT",
    "COORD_LARGE_PASSIVE_KILL",
    "COORD_2_AGENTS_HARD",
    "COORD_3_AGENTS_SOFT",
    "HANDOVER_COMPLETE",
    "COORD_MINE_HANDOVER",
    "COORD_MINE_STONE_SOFT",
    "COORD_MINE_STONE_HARD",
    "COORD_MINE_COAL_SOFT",
    "COORD_MINE_COAL_HARD",
    "COORD_MINE_IRON_SOFT",
    "COORD_MINE_IRON_HARD",
    "COORD_MINE_DIAMOND_SOFT",
    "COORD_MINE_DIAMOND_HARD",
    "COORD_MINE_SAPPHIRE_SOFT",
    "COORD_MINE_SAPPHIRE_HARD",
    "COORD_MINE_RUBY_SOFT",
    "COORD_MINE_RUBY_HARD",
    "COORD_BUILD_SHELTER",
    "COORD_3_AGENTS_HARD",
    "COORD_BUILD_FORGE",
    "COORD_BUILD_BEACON",
    "COORD_DIAMOND_PICKAXE",
    "COORD_DIAMOND_SWORD",
    "COORD_DIAMOND_ARMOUR",
    "COORD_ELITE_MELEE_KILL",
    "COORD_ELITE_RANGED_KILL",
)
# Reward (tier weight) of each achievement: basic 1, intermediate 3, advanced 5, very advanced 8.
ACHIEVEMENT_WEIGHTS: tuple[int, ...] = (
    (1,) * 26
    + (3,) * 18
    + (5,) * 13
    + (8,) * 9
    + (3, 3, 5, 5, 5, 5, 3, 3, 3, 3, 5, 5, 5, 5, 8, 8, 8, 8, 5, 8, 8, 8, 8, 8, 8, 8, 8)
)
FIRST_COORD_ACHIEVEMENT = 66  # achievements 66..92 are the 27 coordination achievements
# Achievements reachable in the one-level (overworld-only) Debug variant, per alem's compute_score.
OVERWORLD_ACHIEVEMENTS = frozenset(list(range(26)) + [28, 29, 30, 31] + list(range(66, 93)))


def role_of(agent_id: int) -> str:
    """Role of agent ``agent_id`` (ALEM assigns warrior, forager, miner cyclically)."""
    return ROLE_ORDER[agent_id % 3]


def give_target(agent_id: int, slot: int) -> int:
    """Teammate that Give slot ``slot`` of ``agent_id`` hands to (slot s -> s, or s+1 past oneself)."""
    return slot if slot < agent_id else slot + 1


def give_action(agent_id: int, target: int) -> int:
    """Action index with which ``agent_id`` gives to ``target``."""
    if target == agent_id or not 0 <= target < N_AGENTS:
        raise ValueError(f"agent {agent_id} cannot give to agent {target}")
    return GIVE + (target if target < agent_id else target - 1)


def action_name(action: int, agent_id: int) -> str:
    """The harness label of ``action`` for ``agent_id`` (Give slots name their teammate)."""
    if 0 <= action < GIVE:
        return ACTION_LABELS[action]
    if GIVE <= action < N_ACTIONS:
        return f"Give to Agent {give_target(agent_id, action - GIVE)}"
    raise ValueError(f"action {action} out of range 0..{N_ACTIONS - 1}")


_LABEL_INDEX = {label.lower(): i for i, label in enumerate(ACTION_LABELS[:GIVE])}


def action_index(name: str, agent_id: int) -> int:
    """Inverse of :func:`action_name` (case-insensitive; ``Give to Agent X``)."""
    key = " ".join(name.strip().lower().split())
    if key in _LABEL_INDEX:
        return _LABEL_INDEX[key]
    if key.startswith("give to agent "):
        return give_action(agent_id, int(key.rsplit(" ", 1)[1]))
    raise ValueError(f"unknown ALEM action {name!r}")
